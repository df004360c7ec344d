import { inspectSession, readWholeSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { createAgent, modelFallbackMiddleware, modelRetryMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { FlakyStore } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "retry-session";
const RUN = "retry-run";

/** A model whose provider is overloaded on its first call only. */
function overloadedOnce() {
  return new ScriptedChatModel((_messages: BaseMessage[], call: number) => {
    if (call === 1) throw new Error("503 overloaded");
    return new AIMessage("ok");
  });
}

/** The run's model steps as inspection shows them: [status, retryOf] per attempt. */
async function modelSteps(store: FlakyStore) {
  const [run] = (await inspectSession(store, SESSION)).runs;
  return (run?.steps ?? [])
    .filter((step) => step.kind === "model")
    .map((step) => step.attempts.map((attempt) => [attempt.status, attempt.retryOf]));
}

describe("a model call retried by LangChain is one step with a new attempt (retryOf)", () => {
  it("withRetry", async () => {
    const store = new FlakyStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = overloadedOnce();
    const answer = await model
      .withRetry({ stopAfterAttempt: 2 })
      .invoke([new HumanMessage("hi")], { callbacks: [handler] });
    expect(answer.content).toBe("ok");
    expect(model.calls).toBe(2);
    const steps = await modelSteps(store);
    expect(steps).toHaveLength(1);
    const [failed, retried] = steps[0] ?? [];
    expect(failed?.[0]).toBe("failed");
    expect(retried?.[0]).toBe("completed");
    const [run] = (await inspectSession(store, SESSION)).runs;
    expect(retried?.[1]).toBe(run?.steps[0]?.attempts[0]?.attemptId);
    // The retry's request names its own LangChain run, as the first attempt's does.
    const requested = (await readWholeSession(store, SESSION)).filter(
      (event) => event.type === "model.requested",
    );
    const runIds = requested.map(
      (event) => (event.metadata?.langchain as { runId?: string } | undefined)?.runId,
    );
    expect(runIds).toHaveLength(2);
    expect(runIds.every((id) => typeof id === "string")).toBe(true);
    expect(new Set(runIds).size).toBe(2);
  });

  it("createAgent's modelRetryMiddleware", async () => {
    const store = new FlakyStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const agent = createAgent({
      model: overloadedOnce(),
      tools: [],
      middleware: [modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 0 })],
    });
    const result = await agent.invoke(
      { messages: [{ role: "user", content: "hi" }] },
      { callbacks: [handler] },
    );
    expect(result.messages.at(-1)?.content).toBe("ok");
    const steps = await modelSteps(store);
    expect(steps).toHaveLength(1);
    expect(steps[0]?.map(([status]) => status)).toEqual(["failed", "completed"]);
    expect(steps[0]?.[1]?.[1]).toBeDefined();
  });

  it("on resume, a retry in flight at the crash is retried once more and nothing is left unresolved", async () => {
    const store = new FlakyStore();
    const input = [new HumanMessage("hi")];
    // The first call fails; the process "dies" during withRetry's second attempt.
    const crashing = new ScriptedChatModel((_messages: BaseMessage[], call: number) => {
      if (call === 1) throw new Error("503 overloaded");
      store.failing = true;
      return new AIMessage("lost");
    });
    const first = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await expect(
      crashing.withRetry({ stopAfterAttempt: 2 }).invoke(input, { callbacks: [first] }),
    ).rejects.toThrow();
    store.failing = false;
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    expect(inFlight?.retryOf).toBeDefined();

    const model = new ScriptedChatModel(() => new AIMessage("ok"));
    const second = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const answer = await model
      .withRetry({ stopAfterAttempt: 2 })
      .invoke(input, { callbacks: [second] });
    expect(answer.content).toBe("ok");
    expect(model.calls).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    const steps = await modelSteps(store);
    expect(steps).toHaveLength(1);
    expect(steps[0]?.map(([status]) => status)).toEqual(["failed", "requested", "completed"]);
    expect(steps[0]?.[2]?.[1]).toBe(inFlight?.attemptId);
  });

  it("a different request after a failure (modelFallbackMiddleware's other model) is a call of its own", async () => {
    class OtherModel extends ScriptedChatModel {
      override invocationParams(): Record<string, unknown> {
        return { ...super.invocationParams(), model: "scripted-2" };
      }
    }
    const store = new FlakyStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const agent = createAgent({
      model: overloadedOnce(),
      tools: [],
      middleware: [modelFallbackMiddleware(new OtherModel(() => new AIMessage("fallback")))],
    });
    const result = await agent.invoke(
      { messages: [{ role: "user", content: "hi" }] },
      { callbacks: [handler] },
    );
    expect(result.messages.at(-1)?.content).toBe("fallback");
    expect(await modelSteps(store)).toEqual([[["failed", undefined]], [["completed", undefined]]]);
  });
});
