import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectSession } from "../inspect/inspect-session.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { expectLedgerError } from "../testing/conformance-helpers.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-decided-meanwhile-", { beforeAll, afterAll });
const WORKER = { type: "agent", id: "worker" } as const;
const PERSON = { type: "human", id: "on-call" } as const;
const SEND = {
  toolCallId: "c1",
  name: "send_email",
  args: { to: "a@b.c" },
  effect: { kind: "write", idempotent: false },
} as const;

/** A ledger file whose run "main" holds send_email in flight, its process gone. */
async function crashedRun(name: string) {
  const store = new SqliteEventStore({ path: join(dir, `${name}.db`) });
  await store.init();
  const first = new SessionRecorder({ store, sessionId: "s", runId: "main", actor: WORKER });
  await first.startRun();
  await first.beforeToolCall(SEND);
  return store;
}

/** What `agent-ledger resolve` does: the decision written by a person on the attempt's run. */
async function personDecides(
  store: SqliteEventStore,
  runId: string,
  decision: "abandon" | "cancel",
) {
  const person = await SessionRecorder.resume({ store, sessionId: "s", runId, actor: PERSON });
  if (decision === "cancel") return person.cancelRun("checked: the whole task is void");
  const [attempt] = (await inspectSession(store, "s")).unresolved;
  if (attempt === undefined) throw new Error("nothing in flight");
  return person.abandon(attempt, "checked: the email went out");
}

/** The worker of run "main", resumed (a new process reading the run as it is). */
function resumedWorker(store: SqliteEventStore): Promise<SessionRecorder> {
  return SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor: WORKER });
}

describe("a resumed worker whose run a person decided on meanwhile (agent-ledger resolve)", () => {
  it("is told a person decided, and to resume again, not that another process has the run", async () => {
    const store = await crashedRun("abandoned");
    const worker = await resumedWorker(store);
    // The on-call person abandons the call while the worker goes through its replay.
    await personDecides(store, "main", "abandon");
    // The worker meets the call as it read it, and decides it in-process (the README's
    // recorder.retry(error.attempt)): the person's decision is already there.
    const asked = await expectLedgerError("the call in flight", () => worker.beforeToolCall(SEND), {
      code: "unresolved-attempt",
    });
    const lost = await expectLedgerError(
      "the retry",
      () => worker.retry((asked as unknown as { attempt: never }).attempt),
      { code: "conflict" },
    );
    expect(lost).toMatchObject({ expectedSeq: 2, actualSeq: 3 });
    expect(lost.message).toContain(
      "by a person's decision, not by another process: on-call abandoned attempt",
    );
    expect(lost.message).toContain('"checked: the email went out"');
    expect(lost.message).toContain("resume the run again");
    expect(lost.message).not.toContain("another process has this run");

    // Resumed again, the worker hears the decision.
    const again = await resumedWorker(store);
    const send = await again.beforeToolCall(SEND);
    expect(send.replayed).toMatchObject({
      status: "abandoned",
      reason: "checked: the email went out",
    });
    await store.close();
  });

  it("is told a person cancelled the run (run-closed), not that another writer took it", async () => {
    const store = await crashedRun("cancelled");
    const worker = await resumedWorker(store);
    await personDecides(store, "main", "cancel");
    const closed = await expectLedgerError("a write", () => worker.checkpoint({ step: 1 }), {
      code: "run-closed",
    });
    expect(closed.message).toContain(
      'run main was cancelled by on-call ("checked: the whole task is void") while this recorder had it open',
    );
    expect(closed.message).not.toContain("another process has this run");
    await store.close();
  });

  it("still says another process has the run when an agent wrote to it", async () => {
    const store = await crashedRun("raced");
    const worker = await resumedWorker(store);
    const other = await resumedWorker(store);
    await other.checkpoint({ by: "the other worker" });
    const lost = await expectLedgerError(
      "a write",
      () => worker.checkpoint({ by: "this worker" }),
      {
        code: "conflict",
      },
    );
    expect(lost.message).toContain("another process has this run");
    await store.close();
  });
});
