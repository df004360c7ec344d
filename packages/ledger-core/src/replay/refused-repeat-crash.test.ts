import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import type { Attempt } from "../recorder/attempt.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { childLines } from "../testing/crash-child.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { asked } from "./asked-call.test.data.js";

const dir = scratchDirectory("agent-ledger-refused-repeat-", { beforeAll, afterAll });

const core = new URL("../../dist/index.js", import.meta.url).href;
const sqlite = new URL("../../dist/stores/sqlite/index.js", import.meta.url).href;

const address = { sessionId: "s", runId: "r" };
const actor = { type: "agent", id: "setup" } as const;
const createDatabase = { toolCallId: "create-db", name: "createDatabase", args: { name: "shop" } };

// The agent process: before any model call (nothing to give the tool call as its cause), it
// asks for a tool that is not idempotent, and is killed while the tool is out.
const agent = `
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.init();
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: ${JSON.stringify(actor)} });
await recorder.startRun();
await recorder.beforeToolCall(${JSON.stringify(createDatabase)});
process.stdout.write(JSON.stringify({ inFlight: "create-db" }) + "\\n");
setInterval(() => {}, 1000);
`;

/** The run of a child killed with `createDatabase` in flight, resumed in this process. */
async function resumedAfterCrash(name: string) {
  const path = join(dir, `${name}.db`);
  const { exited } = childLines<{ inFlight: string }>(
    ["--input-type=module", "-e", agent, path],
    (_line, child) => child.kill("SIGKILL"),
  );
  const end = await exited;
  expect(end).toMatchObject({ lines: [{ inFlight: "create-db" }], signal: "SIGKILL" });
  const store = new SqliteEventStore({ path });
  await store.init();
  afterAll(() => store.close());
  const resumed = await SessionRecorder.resume({ store, ...address, actor });
  return { store, resumed };
}

async function refusal(request: Promise<Attempt>): Promise<LedgerError & { attempt: Attempt }> {
  const error: unknown = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!LedgerError.isInstance(error, "unresolved-attempt")) throw error ?? new Error("not refused");
  return error as LedgerError & { attempt: Attempt };
}

const toolRequests = async (store: SqliteEventStore) =>
  (await readWholeRun(store, address)).filter(
    (event: LedgerEvent) => event.type === "tool.requested",
  );

describe("a tool call made before any model call, in flight at a SIGKILL, asked for again on resume", () => {
  it("is refused again with the same attempt until abandoned, then gets the abandonment", async () => {
    const { store, resumed } = await resumedAfterCrash("abandoned");
    const [recorded] = await toolRequests(store);
    const first = await refusal(resumed.beforeToolCall(createDatabase));
    expect(first.attempt.attemptId).toBe(recorded?.attemptId);
    expect(await asked(resumed.beforeToolCall(createDatabase))).toEqual({
      refused: "unresolved-attempt",
      attemptId: recorded?.attemptId,
    });
    expect(await toolRequests(store)).toHaveLength(1);

    await resumed.abandon(first.attempt, "checked: no database was created");
    const after = await resumed.beforeToolCall(createDatabase);
    expect(after.attemptId).toBe(recorded?.attemptId);
    expect(after.replayed).toMatchObject({
      status: "abandoned",
      reason: "checked: no database was created",
    });
    expect(await toolRequests(store)).toHaveLength(1);
  });

  it("retried by the caller: the retry is the one new attempt, and asking again is still refused", async () => {
    const { store, resumed } = await resumedAfterCrash("retried");
    const [recorded] = await toolRequests(store);
    const first = await refusal(resumed.beforeToolCall(createDatabase));
    expect(await asked(resumed.beforeToolCall(createDatabase))).toMatchObject({
      refused: "unresolved-attempt",
    });
    const retry = await resumed.retry(first.attempt);
    expect(retry).toMatchObject({ toolCallId: "create-db", retryOf: recorded?.attemptId });
    expect(await asked(resumed.beforeToolCall(createDatabase))).toEqual({
      refused: "unresolved-attempt",
      attemptId: recorded?.attemptId,
    });
    await resumed.toolCompleted(retry, "created");
    expect((await toolRequests(store)).map((event) => event.retryOf)).toEqual([
      undefined,
      recorded?.attemptId,
    ]);
  });

  it("the id reused by a new call (other arguments, or asked for by a model completion since): that call runs", async () => {
    const { store, resumed } = await resumedAfterCrash("reused");
    await refusal(resumed.beforeToolCall(createDatabase));
    const other = { ...createDatabase, args: { name: "audit" } };
    expect(await asked(resumed.beforeToolCall(other))).toMatchObject({ runs: expect.any(String) });
    const model = await resumed.beforeModelCall({ request: { ask: "next" } });
    await resumed.modelCompleted(model, { toolCalls: [createDatabase] });
    expect(await asked(resumed.beforeToolCall(createDatabase))).toMatchObject({
      runs: expect.any(String),
    });
    expect(await toolRequests(store)).toHaveLength(3);
  });
});
