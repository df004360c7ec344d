import {
  type Attempt,
  type EventStore,
  inspectSession,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { nextSteps } from "./next-steps.js";
import { renderInspection } from "./render-inspection.js";
import { recordNestedInFlight } from "./session-fixture.test.data.js";

const AGENT = { type: "agent", id: "main" } as const;
const WRITE = {
  toolCallId: "c-write",
  name: "write",
  args: {},
  effect: { kind: "write", idempotent: false },
} as const;

/** What `agent-ledger resolve --approve` writes: a person's approval on the attempt's run. */
async function approve(store: EventStore, runId: string, attempt: Pick<Attempt, "attemptId">) {
  const person = await SessionRecorder.resume({
    store,
    sessionId: "s",
    runId,
    actor: { type: "human", id: "on-call" },
  });
  const unresolved = (await inspectSession(store, "s")).unresolved.find(
    (each) => each.runId === runId && each.attemptId === attempt.attemptId,
  );
  if (unresolved === undefined) throw new Error(`${attempt.attemptId} is not unresolved`);
  await person.approve(unresolved, "checked: it did not take effect");
}

/**
 * The worker resumes run "main": the agent call (writer_tool) is made again and its agent runs
 * again on its child run, where the write is met; the write comes back as it is in the ledger
 * (`replayed`), or the worker stops at `unresolved-attempt` as a worker of core's does.
 */
async function resume(store: EventStore): Promise<"completed" | "stopped"> {
  const main = await SessionRecorder.resume({ store, sessionId: "s", runId: "main", actor: AGENT });
  const call = await main.beforeToolCall({ toolCallId: "c-w", name: "writer_tool", args: {} });
  const writer = main.child({
    actor: { type: "agent", id: "writer" },
    causedByEventId: call.requestedEventId,
  });
  await writer.startRun();
  let write: Attempt;
  try {
    write = await writer.beforeToolCall(WRITE);
  } catch (error) {
    if ((error as { code?: unknown }).code === "unresolved-attempt") return "stopped";
    throw error;
  }
  if (!write.replayed) await writer.toolCompleted(write, { written: true });
  await writer.completeRun();
  await main.toolCompleted(call, { done: true });
  await main.completeRun();
  return "completed";
}

describe("an agent call approved, whose agent ran again and stopped at the call in flight inside it", () => {
  it("gives the call inside a resolve command: told to decide the agent call first, a person approving it each time met the same call forever", async () => {
    const store = new MemoryEventStore();
    const { outer, inner } = await recordNestedInFlight(store, "s");
    expect(nextSteps(await inspectSession(store, "s"))[1]).toEqual({
      action: "decide-outer-first",
      runId: "main",
      attemptId: outer.attemptId,
    });
    await approve(store, "main", outer);
    expect(await resume(store)).toBe("stopped");

    // The approved re-run of writer_tool is in flight now, and the write inside it was met and
    // not decided: both are decisions now.
    const inspection = await inspectSession(store, "s");
    const retry = inspection.unresolved.find((attempt) => attempt.name === "writer_tool");
    expect(retry?.retryOf).toBe(outer.attemptId);
    expect(inspection.unresolved.map((attempt) => [attempt.name, attempt.attemptId])).toEqual(
      expect.arrayContaining([
        ["writer_tool", retry?.attemptId],
        ["write", inner.attemptId],
      ]),
    );
    const steps = nextSteps(inspection);
    for (const [index, attempt] of inspection.unresolved.entries())
      expect(steps[index]).toEqual({
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- s ${attempt.attemptId}`,
      });
    const text = renderInspection(inspection);
    expect(text).not.toContain("decide first the agent's call");
    expect(text).toContain(`agent-ledger resolve --abandon "reason" -- s ${inner.attemptId}`);

    // Both decided as inspect says: the next resume completes, the write made once more.
    await approve(store, "main", { attemptId: retry?.attemptId ?? "" });
    await approve(store, "writer", inner);
    expect(await resume(store)).toBe("completed");
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });
});
