import { MemoryEventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  partsStream,
  payload,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "callbacks", runId: "r1" };

/**
 * Answers by prompt: a repair request with the input fixed, a judge's question with "no", a
 * prompt holding a tool result with "done", the agent's first step with `firstCall`.
 */
function answeringModel(firstCall: LanguageModelV3GenerateResult) {
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    const text = JSON.stringify(prompt);
    if (text.includes("repair")) return textResult('{"city":"Paris"}');
    if (text.includes("risky?")) return textResult("no");
    if (prompt.some((message) => message.role === "tool")) return textResult("done");
    return firstCall;
  };
  return new MockLanguageModelV3({
    doGenerate: async (options) => answer(options),
    doStream: async (options) => ({ stream: partsStream(streamPartsOf(answer(options))) }),
  });
}

/** The run's events as `type` (and for model calls, what was asked). */
async function timeline(store: MemoryEventStore) {
  const events = await readWholeRun(store, address);
  return events.map((event) => {
    if (event.type !== "model.requested") return event.type;
    const prompt = JSON.stringify(payload(event).request.prompt);
    const asked = /repair|risky\?/.exec(prompt)?.[0] ?? "agent";
    return `${event.type} (${asked})`;
  });
}

describe("a model call streamText's callbacks make at a tool-call part", () => {
  /** The agent, streaming, whose bad weather input is repaired by the same model. */
  async function repairAgent(recorder: SessionRecorder, model: MockLanguageModelV3) {
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const cities: string[] = [];
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapped,
      tools: wrapTools(
        {
          weather: tool({
            inputSchema: z.object({ city: z.string() }).strict(),
            execute: async ({ city }) => {
              cities.push(city);
              return `sunny in ${city}`;
            },
          }),
        },
        { recorder },
      ),
      prompt: "weather in Paris?",
      stopWhen: stepCountIs(3),
      experimental_repairToolCall: async ({ toolCall: call }) => {
        const { text } = await generateText({
          model: wrapped,
          prompt: `repair this tool call input: ${call.input}`,
        });
        return { ...call, input: text };
      },
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    return { text: await result.text, cities, errors };
  }

  it("records the repair call as the run's next call, and replays it on resume", async () => {
    const store = new MemoryEventStore();
    const firstCall = toolCallsResult(toolCall("c1", "weather", { town: "Paris" }));
    const live = answeringModel(firstCall);
    expect(await repairAgent(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
      text: "done",
      cities: ["Paris"],
      errors: [],
    });
    const recorded = await timeline(store);
    expect(recorded).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (repair)",
      "model.completed",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);

    const resumed = answeringModel(firstCall);
    const again = await repairAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", cities: [], errors: [] });
    expect(resumed.doStreamCalls.length + resumed.doGenerateCalls.length).toBe(0);
    expect(await timeline(store)).toEqual(recorded);
  });

  /** The agent, streaming, whose refund tool asks the same model (streaming too) if it is risky. */
  async function judgedAgent(recorder: SessionRecorder, model: MockLanguageModelV3) {
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const refunds: number[] = [];
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapped,
      tools: wrapTools(
        {
          refund: tool({
            inputSchema: z.object({ amount: z.number() }),
            needsApproval: async ({ amount }) =>
              (await streamText({ model: wrapped, prompt: `is a refund of ${amount} risky?` })
                .text) === "yes",
            execute: async ({ amount }) => {
              refunds.push(amount);
              return "refunded";
            },
          }),
        },
        { recorder },
      ),
      prompt: "refund 5",
      stopWhen: stepCountIs(3),
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    return { text: await result.text, refunds, errors };
  }

  it("records a needsApproval judge's call the same way, and replays it on resume", async () => {
    const store = new MemoryEventStore();
    const firstCall = toolCallsResult(toolCall("c1", "refund", { amount: 5 }));
    const live = answeringModel(firstCall);
    expect(await judgedAgent(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
      text: "done",
      refunds: [5],
      errors: [],
    });
    const recorded = await timeline(store);
    expect(recorded.slice(0, 5)).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (risky?)",
      "model.completed",
      "model.completed",
    ]);

    const resumed = answeringModel(firstCall);
    const again = await judgedAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", refunds: [], errors: [] });
    expect(resumed.doStreamCalls).toHaveLength(0);
    expect(await timeline(store)).toEqual(recorded);
  });
});
