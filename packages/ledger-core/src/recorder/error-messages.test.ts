import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, LedgerError, RunClosedError } from "../events/errors.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-messages-", { beforeAll, afterAll });

const actor = { type: "agent" as const, id: "a" };

/** A run `main` of 4 events: started, an input, a tool call that completed. */
async function recordedRun(store: MemoryEventStore) {
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "main", actor });
  await recorder.startRun({ task: "pay" });
  await recorder.recordInput({ q: "pay bob", at: 1 });
  const call = await recorder.beforeToolCall({
    toolCallId: "c1",
    name: "send",
    args: { to: "bob", amount: 5 },
  });
  await recorder.toolCompleted(call, { ok: true });
  return recorder;
}

describe("a new SessionRecorder on a run that already has events", () => {
  it("says the run exists and that SessionRecorder.resume continues it (conflict, its fields kept)", async () => {
    const store = new MemoryEventStore();
    await recordedRun(store);
    for (const write of [
      (recorder: SessionRecorder) => recorder.startRun({}),
      (recorder: SessionRecorder) => recorder.beforeModelCall({ request: { model: "m" } }),
    ]) {
      const recorder = new SessionRecorder({ store, sessionId: "s", runId: "main", actor });
      const error = await write(recorder).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(LedgerError.isInstance(error, "conflict")).toBe(true);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({
        code: "conflict",
        actualSeq: 4,
        expectedSeq: 0,
        details: { sessionId: "s", runId: "main", actualSeq: 4, expectedSeq: 0 },
      });
      const message = (error as Error).message;
      expect(message).toContain("run main already has 4 events");
      expect(message).toContain("SessionRecorder.resume({ store, sessionId, runId, actor })");
      expect(message).toContain("another writer");
    }
    // Nothing was written.
    expect((await store.runHead({ sessionId: "s", runId: "main" })).length).toBe(4);
  });

  it("says a run that ended exists (run-closed), not that another writer closed it under this one", async () => {
    const store = new MemoryEventStore();
    const first = await recordedRun(store);
    await first.completeRun({ paid: true });
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "main", actor });
    const error = await recorder.startRun({}).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RunClosedError);
    expect(error).toMatchObject({
      code: "run-closed",
      details: { sessionId: "s", runId: "main", status: "completed" },
    });
    expect((error as Error).message).toBe(
      "run main already exists and is completed, and this recorder did not load it: it writes the run as a new one (new SessionRecorder, or child()), so nothing was written, and a closed run accepts no more events. Give this recorder another runId; SessionRecorder.resume({ store, sessionId, runId, actor }) reads the recorded run as it ended.",
    );
    // The recorded run, as it ended, is what resume reads.
    const resumed = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    expect(resumed.status).toBe("completed");
    expect((await store.runHead({ sessionId: "s", runId: "main" })).length).toBe(5);
  });

  it("tells a writer that loaded the run and lost it to another that another process has it", async () => {
    const store = new MemoryEventStore();
    await recordedRun(store);
    const zombie = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    const other = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    await other.checkpoint({ step: 1 });
    const error = await zombie.beforeModelCall({ request: { model: "m" } }).catch((e) => e);
    expect(error).toMatchObject({ code: "conflict", expectedSeq: 4, actualSeq: 5 });
    expect(error.details).toEqual({ sessionId: "s", runId: "main", expectedSeq: 4, actualSeq: 5 });
    expect(error.message).toBe(
      "run main was written by another writer since this recorder read it (it is at seq 5, this recorder expected 4): another process has this run (two workers resumed it at once, or a process taken for dead came back), so nothing was written and this recorder cannot go on: leave the run to that writer. SessionRecorder.resume reads the run as it now is.",
    );
    // Not the advice for a new recorder on a run that has events: this one did load it.
    expect(error.message).not.toContain("did not load them");
  });
});

describe("a resumed loop that records something other than what it recorded", () => {
  it("names the first difference of an input, with what to do", async () => {
    const store = new MemoryEventStore();
    await recordedRun(store);
    const resumed = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    const error = await resumed.recordInput({ q: "pay bob", at: 2 }).catch((e) => e);
    expect(error).toMatchObject({
      code: "replay-divergence",
      details: { seq: 1, path: "$.input.at" },
    });
    expect(error.message).toBe(
      "input differs from the one recorded at seq 1 (first difference at $.input.at: recorded 1, now 2): the agent is not re-executing the same run. An input built from something that changes between runs (the time, a random id) cannot be answered from the ledger: make it the same on a re-execution. If the difference is meant (a new prompt, a deploy since the run began), this run cannot go on with it: close it (recorder.failRun or recorder.cancelRun) and start a new run",
    );
  });

  it("names the first difference of a tool call's arguments or name, with what to do", async () => {
    const store = new MemoryEventStore();
    await recordedRun(store);
    const resumed = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    await resumed.recordInput({ q: "pay bob", at: 1 });
    const error = await resumed
      .beforeToolCall({ toolCallId: "c1", name: "send", args: { to: "bob", amount: 50 } })
      .catch((e) => e);
    expect(error).toMatchObject({
      code: "replay-divergence",
      details: { seq: 2, path: "$.args.amount", name: "send", recordedName: "send" },
    });
    expect(error.message).toBe(
      "tool call c1 differs from the one recorded at seq 2 (first difference at $.args.amount: recorded 5, now 50): the agent is not re-executing the same run. A tool call built from something that changes between runs (the time, a random id) cannot be answered from the ledger: make it the same on a re-execution. If the difference is meant (a new prompt, a deploy since the run began), this run cannot go on with it: close it (recorder.failRun or recorder.cancelRun) and start a new run",
    );
    const renamed = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor });
    await renamed.recordInput({ q: "pay bob", at: 1 });
    const other = await renamed
      .beforeToolCall({ toolCallId: "c1", name: "transfer", args: { to: "bob", amount: 5 } })
      .catch((e) => e);
    expect(other.message).toContain(
      '(first difference at $.name: recorded "send", now "transfer")',
    );
  });

  it("tells what decides a tool call a crash left in flight: the recorder's abandon or approve then a resume, or the resolve command", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "pay-s", runId: "main", actor });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c9", name: "charge", args: {} });
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "pay-s",
      runId: "main",
      actor,
    });
    const error = await resumed
      .beforeToolCall({ toolCallId: "c9", name: "charge", args: {} })
      .catch((e) => e);
    expect(error).toMatchObject({ code: "unresolved-attempt", attemptId: call.attemptId });
    expect(error.message).toBe(
      `tool call charge (c9) was in flight when the process died, or was left without an outcome by the process that made it (its caller stopped it while it ran: the ledger does not tell which), and is not declared idempotent: it may or may not have happened. Check its effect, then decide attempt ${call.attemptId}: abandon it (recorder.abandon(error.attempt, reason)), or approve it to be made again (recorder.approve(error.attempt, reason)), then resume; from a shell, \`agent-ledger resolve --abandon "reason" -- pay-s ${call.attemptId}\` (with --store <your store's URL> unless $AGENT_LEDGER_STORE names it) abandons it (what you found in place of "reason"; --approve in place of --abandon approves it), then resume. (recorder.retry(error.attempt) is for a loop of your own that makes the call at once with the attempt it returns: a retry nothing makes is in flight again.)`,
    );
  });
});

describe("the commands an unresolved-attempt message prints", () => {
  /** A run `main` of store `file` whose tool call charge (c9) a crash left in flight. */
  async function crashedCharge(file: string) {
    const store = new SqliteEventStore({ path: join(dir, file) });
    await store.init();
    const recorder = new SessionRecorder({ store, sessionId: "pay-s", runId: "main", actor });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c9", name: "charge", args: {} });
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "pay-s",
      runId: "main",
      actor,
    });
    return { store, call, resumed };
  }

  it("name the run's store: pasted into a shell, the resolve command decides that call", async () => {
    const { store, call, resumed } = await crashedCharge("charge's ledger.db");
    const error = await resumed
      .beforeToolCall({ toolCallId: "c9", name: "charge", args: {} })
      .catch((e) => e);
    expect(error.message).toContain(
      `from a shell, \`agent-ledger resolve --abandon "reason" --store 'sqlite:${dir}/charge'\\''s ledger.db' -- pay-s ${call.attemptId}\` abandons it`,
    );
    await store.close();
  });

  it("completeRun refused over calls in flight names the recorder's decisions and each call's resolve command", async () => {
    const { store, call, resumed } = await crashedCharge("open-at-completion.db");
    const error = await resumed.completeRun("done").catch((e) => e);
    expect(error).toMatchObject({ code: "unresolved-attempt", attemptId: call.attemptId });
    expect(error.message).toBe(
      `run main cannot be completed while a call of it has no outcome: tool call charge (c9) attempt ${call.attemptId} (left in flight by a crash or by its caller stopping it, and neither run again nor resolved since). It may or may not have happened, and a completed run takes no more events and is never resumed. Nothing was written: the run stays open. Check its effect, then abandon it (recorder.abandon(error.attempt, reason)) or approve it (recorder.approve(error.attempt, reason)) and resume the run; from a shell, \`agent-ledger resolve --abandon "reason" --store sqlite:${dir}/open-at-completion.db -- pay-s ${call.attemptId}\` abandons it (what you found in place of "reason"; --approve in place of --abandon approves it). Or close the run with failRun or cancelRun.`,
    );
    await store.close();
  });

  it("completeRun refused over four calls in flight prints three commands and where to find the fourth's", async () => {
    const store = new SqliteEventStore({ path: join(dir, "four-open.db") });
    await store.init();
    const recorder = new SessionRecorder({ store, sessionId: "pay-s", runId: "main", actor });
    await recorder.startRun();
    const calls = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        recorder.beforeToolCall({ toolCallId: `c${n}`, name: "charge", args: { n } }),
      ),
    );
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "pay-s",
      runId: "main",
      actor,
    });
    const error = await resumed.completeRun("done").catch((e) => e);
    const option = `--store sqlite:${dir}/four-open.db`;
    const commands = calls
      .slice(0, 3)
      .map(
        (call) =>
          `\`agent-ledger resolve --abandon "reason" ${option} -- pay-s ${call.attemptId}\``,
      );
    expect(error.message).toContain(
      "error.attempt is the first, inspectSession(store, sessionId).unresolved lists each; " +
        `from a shell, ${commands.join(", ")} and as much for the 1 other (\`agent-ledger inspect ${option} -- pay-s\` prints each command) abandon them`,
    );
    await store.close();
  });
});
