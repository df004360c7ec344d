// A streamed run whose first model call sends an error part mid-way and goes on (Anthropic's
// "Overloaded"), then a tool call and its finish part: shared by the replay tests and by the
// crash child that is SIGKILLed inside the second model call.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import {
  assistant,
  partsStream,
  streamPartsOf,
  textResult,
  usage,
} from "./scripted-model.test.data.js";

/** Where the failing stream run records. */
export const FAILING_STREAM_RUN = { sessionId: "stream", runId: "overloaded-1" };

/** Step 1: text, an error part in the middle of it, more text, a tool call, the finish part. */
export const overloadedStep = (): LanguageModelV3StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Hello" },
  { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
  { type: "text-delta", id: "t", delta: " world" },
  { type: "text-end", id: "t" },
  { type: "tool-call", toolCallId: "c1", toolName: "a", input: '{"x":1}' },
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage: usage(3, 2) },
];

/**
 * A model streaming `steps` in turn (a step is its parts, or a function that makes the stream);
 * `calls` counts the provider calls.
 */
export function streamingModel(
  steps: (
    | LanguageModelV3StreamPart[]
    | (() => Promise<ReadableStream<LanguageModelV3StreamPart>>)
  )[],
) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "scripted-1",
    doStream: async () => {
      const step = steps[calls++];
      if (!step) throw new Error(`scripted model: no answer for call ${calls}`);
      return { stream: Array.isArray(step) ? partsStream(step) : await step() };
    },
  });
  return {
    model,
    get calls() {
      return calls;
    },
  };
}

/** The second step's answer: "final". */
export const finalStep = () => streamPartsOf(textResult("final"));

/**
 * The run: `streamText` with tool `a` (its runs counted in `effects`) for up to five steps.
 * Returns what the SDK reports: the text, the number of steps, the finish reason, and the
 * errors `onError` heard.
 */
export async function runFailingStream(recorder: SessionRecorder, model: MockLanguageModelV3) {
  const effects: unknown[] = [];
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "say hello, then call a",
    tools: wrapTools(
      {
        a: tool({
          inputSchema: z.object({ x: z.number() }),
          execute: async ({ x }) => {
            effects.push(x);
            return x + 1;
          },
        }),
      },
      { recorder },
    ),
    stopWhen: stepCountIs(5),
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  return {
    outcome: {
      text: await result.text,
      steps: (await result.steps).length,
      finish: await result.finishReason,
    },
    effects,
    errors,
  };
}

/** In the crash child: step 1 fails mid-stream and goes on; the process dies inside step 2's call. */
export async function crashInsideSecondStep(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...FAILING_STREAM_RUN, actor: assistant });
  const { model } = streamingModel([
    overloadedStep(),
    async () => {
      report.modelCall();
      return crashHere();
    },
  ]);
  await runFailingStream(recorder, model);
}
