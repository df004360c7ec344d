import { MemoryEventStore, readWholeRun, SessionRecorder, verifyRun } from "@agent-ledger/core";
import { APICallError } from "@ai-sdk/provider";
import { generateText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  scriptedModel,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "s1", runId: "r1" };

/**
 * A checkout agent steered step by step: a cheap model looks the order up, prepareStep hands the
 * second step to a stronger model with only `pay` active and forced, its first answer fails with
 * a retryable 503 (maxRetries), its call's name is misspelled and experimental_repairToolCall
 * mends it, and a custom stopWhen stops once paid.
 */
function checkout(recorder: SessionRecorder, paid: string[]) {
  const cheap = scriptedModel([toolCallsResult(toolCall("c1", "lookup", { order: 42 }))]);
  let strongCalls = 0;
  const strong = new MockLanguageModelV3({
    provider: "strong",
    modelId: "strong-1",
    doGenerate: async () => {
      strongCalls++;
      if (strongCalls === 1)
        throw new APICallError({
          message: "overloaded",
          url: "https://example.invalid",
          requestBodyValues: {},
          statusCode: 503,
          isRetryable: true,
        });
      return toolCallsResult(toolCall("c2", "Pay", { order: 42, cents: 1999 }));
    },
  });
  const middleware = ledgerMiddleware({ recorder });
  const tools = wrapTools(
    {
      lookup: tool({
        inputSchema: z.object({ order: z.number() }),
        execute: async ({ order }) => ({ order, cents: 1999 }),
      }),
      pay: tool({
        inputSchema: z.object({ order: z.number(), cents: z.number() }),
        execute: async ({ order }) => {
          paid.push(`order ${order}`);
          return { receipt: `r-${order}` };
        },
      }),
    },
    { recorder },
  );
  const result = generateText({
    model: wrapLanguageModel({ model: cheap.model, middleware }),
    tools,
    prompt: "pay order 42",
    maxRetries: 2,
    providerOptions: { strong: { reasoningEffort: "high" } },
    prepareStep: ({ stepNumber }) =>
      stepNumber === 1
        ? {
            model: wrapLanguageModel({ model: strong, middleware }),
            activeTools: ["pay"],
            toolChoice: { type: "tool", toolName: "pay" },
          }
        : undefined,
    experimental_repairToolCall: async ({ toolCall: call }) =>
      call.toolName === "Pay" ? { ...call, toolName: "pay" } : null,
    stopWhen: ({ steps }) =>
      steps.some((step) => step.toolResults.some((r) => r.toolName === "pay")),
  });
  return { result, calls: () => cheap.calls + strongCalls };
}

describe("a run steered by prepareStep, retries and a repaired tool call", () => {
  it("resumes without calling a model or paying again, the ledger verified", async () => {
    const store = new MemoryEventStore();
    const paid: string[] = [];
    const live = checkout(new SessionRecorder({ store, actor, ...address }), paid);
    const liveResult = await live.result;
    expect(liveResult.steps.length).toBe(2);
    expect(live.calls()).toBe(3);
    expect(paid).toEqual(["order 42"]);

    const replay = checkout(await SessionRecorder.resume({ store, actor, ...address }), paid);
    const replayed = await replay.result;
    expect(replay.calls()).toBe(0);
    expect(paid).toEqual(["order 42"]);
    expect(replayed.steps.map((step) => step.toolResults.map((r) => r.output))).toEqual(
      liveResult.steps.map((step) => step.toolResults.map((r) => r.output)),
    );
    const types = (await readWholeRun(store, address)).map((event) => event.type);
    expect(types.filter((type) => type === "model.failed")).toHaveLength(1);
    expect((await verifyRun(store, address)).ok).toBe(true);
  });
});
