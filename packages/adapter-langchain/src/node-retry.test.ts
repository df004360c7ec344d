import { join } from "node:path";
import {
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  SessionRecorder,
  verifyRun,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { toolAttempts } from "./testing/flaky-lookup.test.data.js";
import { lines } from "./testing/helpers.js";
import {
  payingGraph,
  RUN,
  retryingGraph,
  retryingModelGraph,
  SESSION,
} from "./testing/node-retry.test.data.js";

const scratch = scratchDirectory("langchain-node-retry-", { beforeAll, afterAll });
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

describe.concurrent("a tools node LangGraph runs again (retryPolicy) after a call of its task threw", () => {
  /** Each tool attempt of the session: name, status, the attempt it retried (index), or null. */
  const calls = async (store: Parameters<typeof inspectSession>[0]) => {
    const steps = (await inspectSession(store, SESSION)).runs[0]?.steps ?? [];
    const attempts = steps.flatMap((step) => step.attempts.filter((a) => a.kind === "tool"));
    return attempts.map((attempt) => ({
      name: attempt.name,
      status: attempt.status,
      retried:
        attempt.retryOf === undefined
          ? null
          : attempts.findIndex((a) => a.attemptId === attempt.retryOf),
    }));
  };

  it("refuses to pay again in a ToolNode that runs the turn's calls in one task; the graph throws naming the call", async () => {
    const store = new MemoryEventStore();
    const paid = join(scratch, "one-task.log");
    const { lookups, invoke } = payingGraph(store, { paid });
    const error = await invoke().catch((thrown: unknown) => thrown);
    // pay ran again live with the task (paid twice) and the graph completed.
    expect(lines(paid)).toBe(1);
    const refusal = findLedgerError(error, "unresolved-attempt");
    expect(refusal?.message).toMatch(/tool call pay \(call-pay\) was already completed/);
    expect(refusal?.message).toMatch(/retryPolicy/);
    expect(refusal?.details).toMatchObject({ toolCallId: "call-pay", name: "pay" });
    // The retryPolicy ran the task until its maxAttempts (3); the idempotent lookup each time.
    expect(lookups.count).toBe(3);
    // Nothing half-written: the refused runs recorded nothing, every call has its outcome.
    expect(await verifyRun(store, { sessionId: SESSION, runId: RUN })).toMatchObject({ ok: true });
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    const attempts = await calls(store);
    expect(attempts.filter((attempt) => attempt.name === "pay")).toEqual([
      { name: "pay", status: "completed", retried: null },
    ]);
    expect(attempts.filter((attempt) => attempt.name === "lookup").slice(0, 2)).toEqual([
      { name: "lookup", status: "failed", retried: null },
      { name: "lookup", status: "completed", retried: 0 },
    ]);
    // The next invocation resumes the run: the completed pay is refused as on any resume.
    const resumed = await invoke(null).catch((thrown: unknown) => thrown);
    expect(findLedgerError(resumed, "unresolved-attempt")?.message).toMatch(
      /pay \(call-pay\) was already completed before the run was resumed/,
    );
    expect(lines(paid)).toBe(1);
  });

  it("runs an idempotent call again with the task, as before", async () => {
    const store = new MemoryEventStore();
    const paid = join(scratch, "idempotent.log");
    const { lookups, invoke } = payingGraph(store, { paid, payIdempotent: true });
    expect(await invoke()).toBe("done: found x | paid 5");
    expect(lines(paid)).toBe(2);
    expect(lookups.count).toBe(2);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("with a Send per call, runs only the call that threw again: pay once, the graph completes", async () => {
    const store = new MemoryEventStore();
    const paid = join(scratch, "send-per-call.log");
    const { lookups, invoke } = payingGraph(store, { paid, sendPerCall: true });
    expect(await invoke()).toBe("done: found x | paid 5");
    expect(lines(paid)).toBe(1);
    expect(lookups.count).toBe(2);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    const attempts = await calls(store);
    expect(attempts.filter((attempt) => attempt.name === "pay")).toEqual([
      { name: "pay", status: "completed", retried: null },
    ]);
    expect(attempts.filter((attempt) => attempt.name === "lookup")).toEqual([
      { name: "lookup", status: "failed", retried: null },
      {
        name: "lookup",
        status: "completed",
        retried: attempts.findIndex((a) => a.status === "failed"),
      },
    ]);
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
