import {
  type EventStore,
  type LedgerEvent,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import {
  APICallError,
  type LanguageModelV3Content,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { contentToStreamParts } from "../model-response.js";

/** The actor these tests record as. */
export const assistant = { type: "agent" as const, id: "assistant", framework: "ai-sdk" };

/** The assistant's recorder on run `runId` of session `sessionId`, on `store` (default: new). */
export function assistantRecorder(
  store: EventStore = new MemoryEventStore(),
  { sessionId = "s1", runId = "r1" } = {},
) {
  return { store, recorder: new SessionRecorder({ store, sessionId, runId, actor: assistant }) };
}

/** A recorder of the assistant's run "r" in session "s", on a new memory store. */
export const recordingAssistant = () =>
  assistantRecorder(undefined, { sessionId: "s", runId: "r" });

export const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

export function toolCall(
  toolCallId: string,
  toolName: string,
  input: unknown,
): LanguageModelV3Content {
  return { type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) };
}

export function textResult(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(10, 5),
    warnings: [],
    response: {
      id: `resp-${text.length}`,
      modelId: "scripted",
      timestamp: new Date(1_700_000_000_000),
    },
  };
}

/**
 * A model whose one answer holds a web search the provider ran itself (a tool call marked
 * `providerExecuted`, with its result: 3 hits for `query`), then `text`.
 */
export function providerSearchModel(query: string, text: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [
        {
          type: "tool-call",
          toolCallId: "ws-1",
          toolName: "web_search",
          input: JSON.stringify({ query }),
          providerExecuted: true,
        },
        { type: "tool-result", toolCallId: "ws-1", toolName: "web_search", result: { hits: 3 } },
        { type: "text", text },
      ],
      finishReason: { unified: "stop", raw: "stop" },
      usage: usage(10, 5),
      warnings: [],
    }),
  });
}

export function toolCallsResult(...calls: LanguageModelV3Content[]): LanguageModelV3GenerateResult {
  return {
    content: calls,
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: usage(10, 3),
    warnings: [],
    response: { id: "resp-tools", modelId: "scripted", timestamp: new Date(1_700_000_000_000) },
  };
}

/** The stream parts of a scripted result, with text split into deltas. */
export function streamPartsOf(result: LanguageModelV3GenerateResult): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (result.response) parts.push({ type: "response-metadata", ...result.response });
  for (const part of contentToStreamParts(JSON.parse(JSON.stringify(result.content)))) {
    if (part.type === "text-delta") {
      for (const word of part.delta.split(/(?<= )/))
        parts.push({ type: "text-delta", id: part.id, delta: word });
    } else parts.push(part);
  }
  parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
  return parts;
}

export function partsStream(
  parts: LanguageModelV3StreamPart[],
): ReadableStream<LanguageModelV3StreamPart> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      const part = parts[index++];
      if (part === undefined) controller.close();
      else controller.enqueue(part);
    },
  });
}

/**
 * A mock model answering from a script, one result per call, for both doGenerate and doStream.
 * `calls` counts provider calls (what replay must avoid); `onCall` hears of each as it is made
 * (a crashing child reports them before it dies). `supportedUrls`: the URLs the model takes
 * itself (the SDK downloads the others).
 */
export function scriptedModel(
  script: LanguageModelV3GenerateResult[],
  { onCall, supportedUrls }: { onCall?: () => void; supportedUrls?: Record<string, RegExp[]> } = {},
) {
  let index = 0;
  const next = () => {
    onCall?.();
    const result = script[index++];
    if (!result) throw new Error(`scripted model: no answer for call ${index}`);
    return result;
  };
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "scripted-1",
    ...(supportedUrls && { supportedUrls }),
    doGenerate: async () => next(),
    doStream: async () => ({ stream: partsStream(streamPartsOf(next())) }),
  });
  return {
    model,
    get calls() {
      return model.doGenerateCalls.length + model.doStreamCalls.length;
    },
  };
}

/**
 * A mock model whose first call, generated or streamed, fails with a retryable provider error
 * (`message`, and `statusCode` if given); the calls after it answer `result`. `calls` counts
 * every call, the failed one included.
 */
export function failsOnceThenAnswers(
  error: { message: string; statusCode?: number },
  result: LanguageModelV3GenerateResult,
) {
  let calls = 0;
  const answer = () => {
    calls++;
    if (calls === 1)
      throw new APICallError({
        message: error.message,
        url: "https://example.invalid",
        requestBodyValues: {},
        statusCode: error.statusCode,
        isRetryable: true,
      });
    return result;
  };
  const model = new MockLanguageModelV3({
    doGenerate: async () => answer(),
    doStream: async () => ({ stream: partsStream(streamPartsOf(answer())) }),
  });
  return {
    model,
    get calls() {
      return calls;
    },
  };
}

/** A recorded payload, for assertions on nested fields. */
// biome-ignore lint/suspicious/noExplicitAny: tests read nested payload fields freely
export const payload = (event: LedgerEvent | undefined) => event?.payload as Record<string, any>;
