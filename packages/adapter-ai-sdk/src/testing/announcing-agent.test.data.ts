// A streamed agent whose weather tool calls the same model from its input callbacks while the
// model is still streaming the tool's input: onInputStart announces the call, onInputDelta
// checks each piece of input. Shared by the tests of calls made from a tool's input callbacks
// and by the crash children, SIGKILLed while the agent's stream is still open or inside the
// tool. The model answers by prompt, so a resumed run gets the same answers.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, type ToolSet, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, report, streamCutAfter } from "./crash-in-child.test.data.js";
import { assistant, partsStream, streamPartsOf, textResult } from "./scripted-model.test.data.js";

/** Where the announcing agent records. */
export const ANNOUNCING_RUN = { sessionId: "announcing", runId: "r1" };

/** The pieces the model streams the weather call's input in. */
export const INPUT_DELTAS = ['{"city":', '"Paris"}'];

/** The agent's first step: the weather call, its input streamed in `INPUT_DELTAS`. */
function weatherCallParts(): LanguageModelV3StreamPart[] {
  return [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", id: "resp-tools", modelId: "scripted" },
    { type: "tool-input-start", id: "c1", toolName: "weather" },
    ...INPUT_DELTAS.map((delta) => ({ type: "tool-input-delta" as const, id: "c1", delta })),
    { type: "tool-input-end", id: "c1" },
    { type: "tool-call", toolCallId: "c1", toolName: "weather", input: INPUT_DELTAS.join("") },
    {
      type: "finish",
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 3, text: 3, reasoning: undefined },
      },
    },
  ];
}

/**
 * Answers by prompt: an announcement, a check of a piece of input ("ok"), a prompt holding a
 * tool result with "done", the agent's first step with the streamed weather call. In the crash
 * child each provider call is reported (`reportCalls`); with `cutAfterInput` that first stream
 * stops for good (the crash point) once its tool-input-end part has been read, before its
 * tool-call and finish parts.
 */
export function announcingModel({
  cutAfterInput = false,
  reportCalls = cutAfterInput,
}: {
  cutAfterInput?: boolean;
  reportCalls?: boolean;
} = {}) {
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    const asked = JSON.stringify(prompt);
    if (asked.includes("announce")) return textResult("Looking up the weather");
    if (asked.includes("check")) return textResult("ok");
    return textResult("done");
  };
  const agentStream = () => {
    const parts = weatherCallParts();
    if (!cutAfterInput) return partsStream(parts);
    return streamCutAfter(parts, "tool-input-end");
  };
  const first = (options: LanguageModelV3CallOptions) =>
    options.prompt.every((message) => message.role !== "tool") &&
    !JSON.stringify(options.prompt).match(/announce|check/);
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      if (reportCalls) report.modelCall();
      return answer(options);
    },
    doStream: async (options) => {
      if (reportCalls) report.modelCall();
      if (first(options)) return { stream: agentStream() };
      return { stream: partsStream(streamPartsOf(answer(options))) };
    },
  });
}

/**
 * The agent, streaming, whose weather tool asks the same model (generateText) from its
 * onInputStart and from each onInputDelta. `wrap: false` gives the tools to streamText without
 * `wrapTools`; `insideTool` runs in the tool before it answers (the crash child stops there).
 */
export async function announcingAgent(
  recorder: SessionRecorder,
  model: MockLanguageModelV3,
  { wrap = true, insideTool }: { wrap?: boolean; insideTool?: () => Promise<void> } = {},
) {
  const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
  const heard: string[] = [];
  const cities: string[] = [];
  const errors: unknown[] = [];
  const ask = async (prompt: string) => {
    try {
      heard.push((await generateText({ model: wrapped, prompt })).text);
    } catch (error) {
      errors.push(error);
    }
  };
  const tools: ToolSet = {
    weather: tool({
      inputSchema: z.object({ city: z.string() }),
      onInputStart: ({ toolCallId }) => ask(`announce tool call ${toolCallId}`),
      onInputDelta: ({ inputTextDelta }) => ask(`check ${inputTextDelta}`),
      execute: async ({ city }) => {
        cities.push(city);
        await insideTool?.();
        return `sunny in ${city}`;
      },
    }),
  };
  const result = streamText({
    model: wrapped,
    tools: wrap ? wrapTools(tools, { recorder, idempotent: ["weather"] }) : tools,
    prompt: "weather in Paris?",
    stopWhen: stepCountIs(3),
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  return { text: await result.text, heard, cities, errors };
}

/**
 * In the crash child: the announcement and both checks are answered and recorded; the process
 * dies before the agent's stream passes on its tool-call part.
 */
export async function crashAfterToolInput(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...ANNOUNCING_RUN, actor: assistant });
  await announcingAgent(recorder, announcingModel({ cutAfterInput: true }));
}

/** In the crash child: the agent's stream is recorded; the process dies inside the tool. */
export async function crashInsideAnnouncedTool(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...ANNOUNCING_RUN, actor: assistant });
  await announcingAgent(recorder, announcingModel({ reportCalls: true }), {
    insideTool: crashHere,
  });
}
