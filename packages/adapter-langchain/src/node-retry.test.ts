import { join } from "node:path";
import {
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { toolAttempts } from "./testing/flaky-lookup.test.data.js";
import { RUN, retryingGraph, retryingModelGraph, SESSION } from "./testing/node-retry.test.data.js";

const scratch = scratchDirectory("langchain-node-retry-", afterAll);
const input = () => ({ messages: [new HumanMessage("go")] });
const shape = async (store: Parameters<typeof toolAttempts>[0]) =>
  (await toolAttempts(store, SESSION)).map(({ step, status, retried }) => ({
    step,
    status,
    retried,
  }));

describe.concurrent("a tools node LangGraph runs again (retryPolicy), recorded by the handler", () => {
  it("records each run of the call again as a new attempt of the failed call's step, with retryOf", async () => {
    const store = new MemoryEventStore();
    const { runs, invoke } = retryingGraph(store, { idempotent: false, failures: 2 });
    expect(await invoke(input())).toBe("done: found x");
    expect(runs.count).toBe(3);
    const attempts = await shape(store);
    // One call, one step (each run was a call of its own, in a step of its own).
    expect(attempts).toEqual([
      { step: 1, status: "failed", retried: null },
      { step: 1, status: "failed", retried: 0 },
      { step: 1, status: "completed", retried: 1 },
    ]);
  });

  it("after a crash inside the retry, runs it once more and leaves nothing unresolved (idempotent)", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "in-flight-idempotent.db");
    const child = await crashInChild("node-retry-in-flight", path, "idempotent");
    expect(child.count("lookup")).toBe(2);
    const store = await openLedger(path, onTestFinished);
    const { runs, invoke } = retryingGraph(store, { idempotent: true, failures: 0 });
    expect(await invoke(null)).toBe("done: found x");
    expect(runs.count).toBe(1);
    // The retry in flight was retried; matched with the failure's step instead, it stayed
    // unresolved for good although the run went on past it.
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    expect(await shape(store)).toEqual([
      { step: 1, status: "failed", retried: null },
      { step: 1, status: "requested", retried: 0 },
      { step: 1, status: "completed", retried: 1 },
    ]);
  });

  it("after a crash inside the retry, stops at that retry for a person (not idempotent)", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "in-flight.db");
    await crashInChild("node-retry-in-flight", path, "");
    const store = await openLedger(path, onTestFinished);
    const { runs, invoke } = retryingGraph(store, { idempotent: false, failures: 0 });
    const error = await invoke(null).catch((thrown: unknown) => thrown);
    expect(runs.count).toBe(0);
    const refusal = findLedgerError(error, "unresolved-attempt");
    const unresolved = (await inspectSession(store, SESSION)).unresolved;
    expect(unresolved).toHaveLength(1);
    expect(refusal?.details.attemptId).toBe(unresolved[0]?.attemptId);
    expect(await shape(store)).toEqual([
      { step: 1, status: "failed", retried: null },
      { step: 1, status: "requested", retried: 0 },
    ]);
    // A person found it not done and approved it: the next resume runs it once, as its retry.
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "human", id: "ops" },
    });
    if (!unresolved[0]) throw new Error("expected the retry unresolved");
    await person.approve(unresolved[0], "checked: not done");
    const approved = retryingGraph(store, { idempotent: false, failures: 0 });
    expect(await approved.invoke(null)).toBe("done: found x");
    expect(approved.runs.count).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });
});

describe.concurrent("a model node LangGraph runs again (retryPolicy), recorded by the handler", () => {
  /** The model attempts of the session's run: status, and the attempt each retried (index). */
  const modelAttempts = async (store: Parameters<typeof inspectSession>[0]) => {
    const steps = (await inspectSession(store, SESSION)).runs[0]?.steps ?? [];
    const attempts = steps.flatMap((step) =>
      step.attempts.filter((attempt) => attempt.kind === "model").map((a) => ({ ...a, step })),
    );
    return {
      steps: new Set(attempts.map((attempt) => attempt.step)).size,
      attempts: attempts.map((attempt) => ({
        status: attempt.status,
        retried: attempts.findIndex((other) => other.attemptId === attempt.retryOf),
      })),
    };
  };

  it("records the call made again as a retry of the failed one, in its step", async () => {
    const store = new MemoryEventStore();
    const { model, invoke } = retryingModelGraph(store, { failures: 2 });
    expect(await invoke(input())).toBe("hello");
    expect(model.calls).toBe(3);
    expect(await modelAttempts(store)).toEqual({
      steps: 1,
      attempts: [
        { status: "failed", retried: -1 },
        { status: "failed", retried: 0 },
        { status: "completed", retried: 1 },
      ],
    });
  });

  it("after a crash inside the retry, makes it again and leaves nothing unresolved", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "model-in-flight.db");
    const child = await crashInChild("node-retry-model-in-flight", path);
    expect(child.count("model")).toBe(2);
    const store = await openLedger(path, onTestFinished);
    const { model, invoke } = retryingModelGraph(store, { failures: 0 });
    expect(await invoke(null)).toBe("hello");
    expect(model.calls).toBe(1);
    // The call in flight was made again; matched with the failure's step instead, it stayed
    // unresolved for good (inspect: "the next resume makes this model call again").
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    expect(await modelAttempts(store)).toEqual({
      steps: 1,
      attempts: [
        { status: "failed", retried: -1 },
        { status: "requested", retried: 0 },
        { status: "completed", retried: 1 },
      ],
    });
  });
});
