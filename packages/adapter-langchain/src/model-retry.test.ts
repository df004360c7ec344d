import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { createAgent, modelFallbackMiddleware, modelRetryMiddleware } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import {
  overloadedOnce,
  ProviderModel,
  RUN,
  rateLimited,
  retriedPrompt,
  SESSION,
} from "./testing/model-retry.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-retry-", { beforeAll, afterAll });

/** The run's model steps as inspection shows them: [status, retryOf] per attempt. */
async function modelSteps(store: EventStore) {
  const [run] = (await inspectSession(store, SESSION)).runs;
  return (run?.steps ?? [])
    .filter((step) => step.kind === "model")
    .map((step) => step.attempts.map((attempt) => [attempt.status, attempt.retryOf]));
}

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("a model call retried by LangChain is one step with a new attempt (retryOf)", () => {
  it("withRetry", async () => {
    const store = new MemoryEventStore();
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
    const store = new MemoryEventStore();
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

  it("createAgent's modelRetryMiddleware with a bare schema as responseFormat, whose tool is named anew at each call", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const agent = createAgent({
      model: overloadedOnce(),
      tools: [],
      responseFormat: z.object({ answer: z.string() }) as never,
      middleware: [
        modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 0 }),
        ledgerMiddleware({ handler }),
      ],
    });
    await agent.invoke({ messages: [{ role: "user", content: "hi" }] }, { callbacks: [handler] });
    const steps = await modelSteps(store);
    expect(steps).toHaveLength(1);
    expect(steps[0]?.map(([status]) => status)).toEqual(["failed", "completed"]);
    expect(steps[0]?.[1]?.[1]).toBeDefined();
    // The retry was sent with another tool name (extract-<n+1>): the metadata says which.
    const names = (await readWholeSession(store, SESSION))
      .filter((event) => event.type === "model.requested")
      .map(
        (event) =>
          (event.metadata?.structuredOutput as { generatedTools?: string[] } | undefined)
            ?.generatedTools,
      );
    expect(names).toHaveLength(2);
    expect(names[0]).not.toEqual(names[1]);
  });

  it("on resume, a retry in flight at the crash is retried once more and nothing is left unresolved", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "retry.db");
    // The first call fails; the process dies during withRetry's second attempt.
    await crashInChild("model-retry", path);
    const store = await openLedger(path, onTestFinished);
    const input = retriedPrompt();
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
    const store = new MemoryEventStore();
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

describe("the same request after a failure that is no retry is a call of its own", () => {
  const ofOwn = [[["failed", undefined]], [["completed", undefined]]];

  it("withFallbacks: a fallback provider serving the same model id", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const azure = new ProviderModel("azure", () => new AIMessage("from azure"));
    const answer = await rateLimited("openai")
      .withFallbacks([azure])
      .invoke([new HumanMessage("hi")], { callbacks: [handler] });
    expect(answer.content).toBe("from azure");
    expect(await modelSteps(store)).toEqual(ofOwn);
  });

  it("withFallbacks: a fallback that is the same model, with the same provider", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const fallback = new ProviderModel("openai", () => new AIMessage("from the other key"));
    const answer = await rateLimited("openai")
      .withFallbacks([fallback])
      .invoke([new HumanMessage("hi")], { callbacks: [handler] });
    expect(answer.content).toBe("from the other key");
    expect(await modelSteps(store)).toEqual(ofOwn);
  });

  it("createAgent's modelFallbackMiddleware: another provider of the same model id", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const azure = new ProviderModel("azure", () => new AIMessage("from azure"));
    const agent = createAgent({
      model: rateLimited("openai"),
      tools: [],
      middleware: [modelFallbackMiddleware(azure)],
    });
    const result = await agent.invoke(
      { messages: [{ role: "user", content: "hi" }] },
      { callbacks: [handler] },
    );
    expect(result.messages.at(-1)?.content).toBe("from azure");
    expect(await modelSteps(store)).toEqual(ofOwn);
  });

  it("batch: samples of one prompt, the first failing", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = new ScriptedChatModel((_messages, call) => {
      if (call === 1) throw new Error("500 upstream");
      return new AIMessage(`sample ${call}`);
    });
    // Self-consistency: three samples, one at a time, voted on.
    const vote = RunnableLambda.from(async (question: string, config) => {
      const samples = await model.batch(
        [question, question, question],
        { ...config, maxConcurrency: 1 },
        { returnExceptions: true },
      );
      return samples.map((sample) => (sample instanceof Error ? "error" : sample.content));
    });
    expect(await vote.invoke("pick a number", { callbacks: [handler] })).toEqual([
      "error",
      "sample 2",
      "sample 3",
    ]);
    expect(await modelSteps(store)).toEqual([...ofOwn, [["completed", undefined]]]);
  });
});
