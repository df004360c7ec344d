import {
  type JsonObject,
  type JsonValue,
  NonSerializableError,
  wellFormedText,
} from "@agent-ledger/core";
import type { ModelRequest, ModelResponse } from "@openai/agents";
import { Usage } from "@openai/agents";

type StreamDoneEvent = {
  type: "response_done";
  response: {
    id: string;
    requestId?: string;
    usage: Record<string, unknown>;
    output: unknown[];
  };
};

/**
 * Plain JSON with each lone surrogate in its strings (and keys) replaced by U+FFFD, as a UTF-8
 * encoder does: what a provider receives of such text, and what replay hands back.
 */
export function wellFormedJson(value: JsonValue): JsonValue {
  if (typeof value === "string") return wellFormedText(value);
  if (Array.isArray(value)) return value.map(wellFormedJson);
  if (value === null || typeof value !== "object") return value;
  const result: JsonObject = {};
  for (const [key, item] of Object.entries(value))
    result[wellFormedText(key)] = wellFormedJson(item);
  return result;
}

/**
 * `text` (written by JSON.stringify) parsed, well-formed. JSON.stringify writes a lone
 * surrogate as a `\udXXX` escape and a pair as itself: text without such an escape has none to
 * replace, and the walk of `wellFormedJson` (a pass over a whole conversation) is skipped.
 */
export function parseWellFormed(text: string): JsonValue {
  const json = JSON.parse(text) as JsonValue;
  return /\\ud[89a-f]/i.test(text) ? wellFormedJson(json) : json;
}

// What a tool's output or a run's final output is recorded as. The SDK shows the model an object
// output as its JSON.stringify text (toSmartString), so a
// tool may return undefined fields, Dates or -0, which the ledger's strict JSON refuses: the
// run would die after the tool ran. Record the JSON the model saw instead; replay then builds
// the same text. An output JSON.stringify cannot write (a cycle, a bigint) is recorded as is,
// and the recorder names its path. Lone surrogates become U+FFFD (see wellFormedJson).
// A value JSON cannot hold at the top (NaN, Infinity), or whose JSON is a string (a Date: the
// model saw its quoted text), is recorded as the text the model saw.
export function recordedOutput(output: unknown): unknown {
  if (Object.is(output, -0)) return 0; // String(-0) is "0" too
  if (typeof output === "string") return wellFormedJson(output);
  if (typeof output === "number" && !Number.isFinite(output)) return String(output);
  if (output === undefined || output === null || typeof output !== "object") return output;
  let text: string | undefined;
  try {
    text = JSON.stringify(output);
  } catch {
    return output;
  }
  if (text === undefined) return output;
  const json = parseWellFormed(text);
  return typeof json === "string" ? wellFormedJson(text) : json;
}

// JSON round trip: drops undefined fields and functions, honours toJSON. Request items are
// SDK-built plain data; this only strips the runtime-only parts the ledger must not hash.
function plain(value: unknown, path: string): JsonValue {
  if (value === undefined) return null;
  try {
    return parseWellFormed(JSON.stringify(value));
  } catch (error) {
    throw Object.assign(new NonSerializableError(path, "not JSON-serializable"), { cause: error });
  }
}

/**
 * A run's input as plain JSON (the SDK's item helpers leave fields such as providerData
 * undefined); a RunState as its `toJSON()`, what its `toString()` writes.
 */
export function runInputToJson(input: string | readonly unknown[] | object): JsonValue {
  return plain(input, "$.input");
}

/**
 * A ModelRequest as deterministic plain JSON: what the model was asked, never the abort signal,
 * tracing objects, internal runner hints or runtime-only retry policies. On resume the request
 * is matched by hash, so nothing here may change between two executions of the same run.
 */
export function modelRequestToJson(request: ModelRequest): JsonObject {
  const { retry: _retry, ...modelSettings } = request.modelSettings ?? {};
  const json: JsonObject = {
    input: plain(request.input, "$.input"),
    modelSettings: plain(modelSettings, "$.modelSettings"),
    tools: (request.tools ?? []).map((tool) => {
      const entry: JsonObject = { type: tool.type, name: tool.name };
      if ("description" in tool && tool.description !== undefined)
        entry.description = tool.description;
      if ("parameters" in tool) entry.parameters = plain(tool.parameters, "$.tools.parameters");
      if ("strict" in tool && tool.strict !== undefined) entry.strict = tool.strict;
      return entry;
    }),
    handoffs: (request.handoffs ?? []).map((handoff) => ({
      toolName: handoff.toolName,
      toolDescription: handoff.toolDescription,
      inputJsonSchema: plain(handoff.inputJsonSchema, "$.handoffs.inputJsonSchema"),
      strictJsonSchema: handoff.strictJsonSchema,
    })),
    outputType: plain(request.outputType, "$.outputType"),
  };
  if (request.systemInstructions !== undefined)
    json.systemInstructions = request.systemInstructions;
  if (request.previousResponseId !== undefined)
    json.previousResponseId = request.previousResponseId;
  if (request.conversationId !== undefined) json.conversationId = request.conversationId;
  if (request.prompt !== undefined) json.prompt = plain(request.prompt, "$.prompt");
  return json;
}

function usageToJson(usage: Usage | Record<string, unknown> | undefined): JsonObject {
  const source = (usage ?? {}) as Record<string, unknown>;
  const json: JsonObject = {
    requests: Number(source.requests ?? 1),
    inputTokens: Number(source.inputTokens ?? 0),
    outputTokens: Number(source.outputTokens ?? 0),
    totalTokens: Number(source.totalTokens ?? 0),
  };
  if (source.inputTokensDetails !== undefined)
    json.inputTokensDetails = plain(source.inputTokensDetails, "$.usage.inputTokensDetails");
  if (source.outputTokensDetails !== undefined)
    json.outputTokensDetails = plain(source.outputTokensDetails, "$.usage.outputTokensDetails");
  return json;
}

/** The recorded form of a model response: output items, usage and ids. */
export function modelResponseToJson(response: ModelResponse): JsonObject {
  const json: JsonObject = {
    output: plain(response.output, "$.output"),
    usage: usageToJson(response.usage),
  };
  if (response.responseId !== undefined) json.responseId = response.responseId;
  if (response.requestId !== undefined) json.requestId = response.requestId;
  if (response.providerData !== undefined)
    json.providerData = plain(response.providerData, "$.providerData");
  return json;
}

/** The recorded form of a stream's `response_done` event. */
export function streamDoneToJson(event: StreamDoneEvent): JsonObject {
  const json: JsonObject = {
    output: plain(event.response.output, "$.output"),
    usage: usageToJson(event.response.usage),
    responseId: event.response.id,
  };
  if (event.response.requestId !== undefined) json.requestId = event.response.requestId;
  return json;
}

/** A ModelResponse rebuilt from the ledger (replay). */
export function modelResponseFromJson(value: JsonValue): ModelResponse {
  const json = (value ?? {}) as JsonObject;
  const response: ModelResponse = {
    output: (json.output ?? []) as unknown as ModelResponse["output"],
    usage: new Usage(json.usage as never),
  };
  if (typeof json.responseId === "string") response.responseId = json.responseId;
  if (typeof json.requestId === "string") response.requestId = json.requestId;
  if (json.providerData && typeof json.providerData === "object")
    response.providerData = json.providerData as Record<string, unknown>;
  return response;
}

// Usage details are arrays on the Usage class and single records on the wire.
function firstDetail(value: JsonValue | undefined): JsonValue | undefined {
  if (Array.isArray(value)) return value[0];
  return value ?? undefined;
}

/**
 * A recorded completion answering a call the runner retried after `failed` failures: its usage
 * counts them as the runner counts failed retry attempts (one request each, no tokens), so a
 * resumed run's usage is the one of the run it continues.
 */
export function withFailedAttempts(result: JsonValue | undefined, failed: number): JsonValue {
  const json = (result ?? {}) as JsonObject;
  if (failed === 0) return result ?? null;
  const usage = (json.usage ?? {}) as JsonObject;
  const entry: JsonObject = {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    totalTokens: usage.totalTokens ?? 0,
  };
  const inputDetails = firstDetail(usage.inputTokensDetails);
  if (inputDetails !== undefined) entry.inputTokensDetails = inputDetails;
  const outputDetails = firstDetail(usage.outputTokensDetails);
  if (outputDetails !== undefined) entry.outputTokensDetails = outputDetails;
  const requestUsageEntries: JsonValue[] = [...Array.from({ length: failed }, () => ({})), entry];
  return {
    ...json,
    usage: { ...usage, requests: Number(usage.requests ?? 1) + failed, requestUsageEntries },
  };
}

/**
 * The usage of a live completion answering a call the runner retried on resume after `failed`
 * failures it did not see (answered from the ledger by their retries), counting them as
 * `withFailedAttempts` counts them in a recorded completion: the usage of the run it continues.
 * A `Usage`, as `getResponse` gives it.
 */
export function usageWithFailedAttempts(usage: Usage, failed: number): Usage {
  return modelResponseFromJson(withFailedAttempts({ usage: usageToJson(usage) }, failed)).usage;
}

/** `usageWithFailedAttempts` for the usage of a stream's `response_done` (its wire record). */
export function streamUsageWithFailedAttempts(
  usage: StreamDoneEvent["response"]["usage"],
  failed: number,
): StreamDoneEvent["response"]["usage"] {
  return streamDoneFromJson(withFailedAttempts({ usage: usageToJson(usage) }, failed)).response
    .usage;
}

/** A `response_done` stream event rebuilt from the ledger (replay of a streamed call). */
export function streamDoneFromJson(value: JsonValue): StreamDoneEvent {
  const json = (value ?? {}) as JsonObject;
  const usage = (json.usage ?? {}) as JsonObject;
  const wireUsage: Record<string, unknown> = {
    requests: usage.requests,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
  };
  const inputDetails = firstDetail(usage.inputTokensDetails);
  if (inputDetails !== undefined) wireUsage.inputTokensDetails = inputDetails;
  const outputDetails = firstDetail(usage.outputTokensDetails);
  if (outputDetails !== undefined) wireUsage.outputTokensDetails = outputDetails;
  if (Array.isArray(usage.requestUsageEntries))
    wireUsage.requestUsageEntries = usage.requestUsageEntries;
  const response: StreamDoneEvent["response"] = {
    id: typeof json.responseId === "string" ? json.responseId : "",
    usage: wireUsage,
    output: (json.output ?? []) as unknown[],
  };
  if (typeof json.requestId === "string") response.requestId = json.requestId;
  return { type: "response_done", response };
}

export type { StreamDoneEvent };
