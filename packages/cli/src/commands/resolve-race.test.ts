import { join } from "node:path";
import { type EventStore, inspectSession, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { interleavedStore, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputStream } from "../io.js";
import type { CommandContext } from "./context.js";
import { resolveCommand } from "./resolve.js";

const folder = scratchDirectory("agent-ledger-resolve-race-", { beforeAll, afterAll });
const agentActor = { type: "agent", id: "a" } as const;

/**
 * A session whose run `run` has two tool calls in flight (pay, then notify), on a SQLite file
 * that resolve reads through its own connection, and the agent (or a second person) writes
 * through another: `meanwhile` runs before each of resolve's appends, as many times as `times`.
 */
async function ledger(
  name: string,
  meanwhile: (writer: { store: EventStore; agent: SessionRecorder }) => Promise<void>,
  times = 1,
) {
  const path = join(folder, name);
  const writer = new SqliteEventStore({ path });
  await writer.init();
  const agent = new SessionRecorder({
    store: writer,
    sessionId: "s",
    runId: "run",
    actor: agentActor,
  });
  await agent.startRun();
  const pay = await agent.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
  const notify = await agent.beforeToolCall({ toolCallId: "c2", name: "notify", args: {} });
  const reader = new SqliteEventStore({ path });
  await reader.init();
  let left = times;
  const store = interleavedStore(reader, async (method) => {
    if (method !== "append" || left === 0) return;
    left -= 1;
    await meanwhile({ store: writer, agent });
  });
  return {
    store,
    pay,
    notify,
    writer,
    async close() {
      expect(left, "written to meanwhile as often as asked").toBe(0);
      await reader.close();
      await writer.close();
    },
  };
}

async function resolve(store: EventStore, args: string[]) {
  let stdout = "";
  const out: OutputStream = {
    write(chunk) {
      stdout += chunk;
      return true;
    },
  };
  const context: CommandContext = {
    args,
    io: { stdout: out, stderr: out, env: {} },
    storeUrl: "sqlite:ledger.db",
    storeSource: "flag",
    openStore: async () => store,
  };
  try {
    return { code: await resolveCommand(context), stdout };
  } catch (error) {
    return { error, stdout };
  }
}

/** The run's events' types from seq 3 on (after run.started and the two requests). */
async function after(store: EventStore): Promise<string[]> {
  const { events } = await store.readRun({ sessionId: "s", runId: "run", fromSeq: 3 });
  return events.map((event) => `${event.type}${event.attemptId ? ` ${event.attemptId}` : ""}`);
}

describe("resolve while its run is written to (the agent still running, another person)", () => {
  it("the call completed by its agent meanwhile is not abandoned: refused as completed, nothing written", async () => {
    const { store, pay, writer, close } = await ledger("completed.db", ({ agent }) =>
      agent.toolCompleted(pay, { paid: true }).then(() => undefined),
    );
    const result = await resolve(store, ["s", pay.attemptId, "--abandon", "looked stuck"]);
    expect(result.error).toMatchObject({
      exitCode: 1,
      message: `attempt ${pay.attemptId} is not unresolved (it is completed)`,
    });
    expect(await after(writer)).toEqual([`tool.completed ${pay.attemptId}`]);
    await close();
  });

  it("another call of the run abandoned meanwhile: read again, and this one abandoned too", async () => {
    const { store, pay, notify, writer, close } = await ledger(
      "sibling.db",
      async ({ store: other }) => {
        const person = await SessionRecorder.resume({
          resolve: false,
          store: other,
          sessionId: "s",
          runId: "run",
          actor: { type: "human", id: "bo" },
        });
        await person.abandon(notify, "not needed");
      },
    );
    const result = await resolve(store, ["s", pay.attemptId, "--abandon", "refunded by hand"]);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain(`abandoned attempt ${pay.attemptId} (tool pay) on run run`);
    expect(await after(writer)).toEqual([
      `attempt.abandoned ${notify.attemptId}`,
      `attempt.abandoned ${pay.attemptId}`,
    ]);
    const inspection = await inspectSession(writer, "s", { resolve: false });
    expect(inspection.unresolved).toEqual([]);
    await close();
  });

  it("a run written to every time it is read: gives up saying so, nothing written", async () => {
    let note = 0;
    const { store, pay, writer, close } = await ledger(
      "busy.db",
      async ({ store: other }) => {
        const head = await other.runHead({ sessionId: "s", runId: "run" });
        await other.append({
          sessionId: "s",
          runId: "run",
          expectedSeq: head.length,
          events: [{ type: "x.progress", actor: agentActor, payload: { note: note++ } }],
        });
      },
      3,
    );
    const result = await resolve(store, ["s", pay.attemptId, "--approve", "retry it"]);
    expect(result.error).toMatchObject({
      code: "conflict",
      exitCode: 1,
      message:
        "nothing written: run run was written to each of the 3 times resolve read it (is its agent still running?): see agent-ledger inspect --store sqlite:ledger.db -- s",
    });
    expect(await after(writer)).toEqual(["x.progress", "x.progress", "x.progress"]);
    await close();
  });
});
