import { type JsonObject, type JsonValue, withoutCredentialKeys } from "@agent-ledger/core";
import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
  SharedV3Warning,
} from "@ai-sdk/provider";
import { toJsonValue } from "./plain-json.js";

/**
 * What `model.completed` holds: everything needed to answer the call again on replay, as a
 * generate result or as stream parts (whichever way it was recorded). Dates are ISO strings,
 * bytes base64; raw request/response bodies and headers are left out.
 */
export interface RecordedModelResponse {
  content: JsonValue[];
  finishReason: { unified: string; raw?: string };
  usage: JsonObject;
  warnings?: JsonValue[];
  providerMetadata?: JsonObject;
  response?: { id?: string; modelId?: string; timestamp?: string };
  /**
   * A stream's tool input parts (`tool-input-start`, `tool-input-delta`, `tool-input-end`) of
   * the calls of tools with an `onInputStart` or `onInputDelta` (wrapped by `wrapTools`), if it
   * had any, each with `at`: the number of content items that had come before it. Deltas of
   * one tool call that came one after the other are one entry, `{ at, type: "tool-input-delta",
   * id, deltas }` (a delta with provider metadata is kept whole, with its `delta`). A replay
   * emits them again where they came, so the SDK calls the tools' `onInputStart` /
   * `onInputDelta` again as it did live.
   */
  toolInputs?: JsonValue[];
}

/** A tool input part of a stream, and `at`: the number of content items that came before it. */
export interface ToolInputPart {
  at: number;
  part: Extract<
    LanguageModelV3StreamPart,
    { type: "tool-input-start" | "tool-input-delta" | "tool-input-end" }
  >;
}

export interface ModelResponseParts {
  content: LanguageModelV3Content[];
  finishReason: LanguageModelV3FinishReason;
  usage: LanguageModelV3Usage;
  warnings?: SharedV3Warning[] | undefined;
  providerMetadata?: SharedV3ProviderMetadata | undefined;
  response?: {
    id?: string | undefined;
    modelId?: string | undefined;
    timestamp?: Date | undefined;
  };
  /** A stream's tool input parts (see `RecordedModelResponse.toolInputs`). */
  toolInputs?: readonly ToolInputPart[];
}

/** `RecordedModelResponse.toolInputs` for `inputs`: runs of one call's deltas as one entry. */
function compactToolInputs(inputs: readonly ToolInputPart[]): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  let deltas: { id: string; at: number; deltas: string[] } | undefined;
  for (const { at, part } of inputs) {
    if (part.type === "tool-input-delta" && part.providerMetadata === undefined) {
      if (deltas?.id === part.id && deltas.at === at) deltas.deltas.push(part.delta);
      else {
        deltas = { id: part.id, at, deltas: [part.delta] };
        entries.push({ at, type: part.type, id: part.id, deltas: deltas.deltas });
      }
      continue;
    }
    deltas = undefined;
    entries.push({ at, ...part });
  }
  return entries;
}

/**
 * Encodes a generate result (or an assembled stream) for `model.completed`. The response's
 * provider metadata is what a provider or gateway chose to send back, never what replay needs
 * to be a credential: every key `isCredentialKey` names in it is `[redacted]` (a gateway echoing
 * the key it used), whatever `redact` says.
 */
export function encodeModelResponse(result: ModelResponseParts): RecordedModelResponse {
  const response = result.response;
  const encoded = toJsonValue({
    content: result.content,
    finishReason: result.finishReason,
    usage: result.usage,
    warnings: result.warnings ?? [],
    providerMetadata: result.providerMetadata,
    response: response && {
      id: response.id,
      modelId: response.modelId,
      timestamp: response.timestamp?.toISOString(),
    },
    ...(result.toolInputs?.length ? { toolInputs: compactToolInputs(result.toolInputs) } : {}),
  }) as unknown as RecordedModelResponse;
  if (encoded.providerMetadata !== undefined)
    encoded.providerMetadata = withoutCredentialKeys(encoded.providerMetadata) as JsonObject;
  return encoded;
}

function responseMetadataOf(recorded: RecordedModelResponse) {
  const response = recorded.response ?? {};
  return {
    ...(response.id !== undefined ? { id: response.id } : {}),
    ...(response.modelId !== undefined ? { modelId: response.modelId } : {}),
    ...(response.timestamp !== undefined ? { timestamp: new Date(response.timestamp) } : {}),
  };
}

/** Rebuilds the generate result a recorded completion stands for. */
export function decodeGenerateResult(value: JsonValue): LanguageModelV3GenerateResult {
  const recorded = value as unknown as RecordedModelResponse;
  const result: LanguageModelV3GenerateResult = {
    content: recorded.content as unknown as LanguageModelV3Content[],
    finishReason: recorded.finishReason as LanguageModelV3FinishReason,
    usage: recorded.usage as unknown as LanguageModelV3Usage,
    warnings: (recorded.warnings ?? []) as unknown as SharedV3Warning[],
    response: responseMetadataOf(recorded),
  };
  if (recorded.providerMetadata)
    result.providerMetadata = recorded.providerMetadata as unknown as SharedV3ProviderMetadata;
  return result;
}

/** The stream parts a `toolInputs` entry stands for. */
function toolInputStreamParts(entry: JsonObject): LanguageModelV3StreamPart[] {
  const { at: _at, deltas, ...part } = entry;
  if (Array.isArray(deltas))
    return deltas.map((delta) => ({
      type: "tool-input-delta",
      id: String(part.id),
      delta: String(delta),
    }));
  return [part as unknown as LanguageModelV3StreamPart];
}

/**
 * The stream parts content would arrive as (one delta per text or reasoning block), with the
 * recorded tool input parts (`toolInputs`) where they came.
 */
export function contentToStreamParts(
  content: JsonValue[],
  toolInputs: readonly JsonValue[] = [],
): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [];
  let next = 0;
  const inputsBefore = (index: number) => {
    for (; next < toolInputs.length; next++) {
      const entry = toolInputs[next] as JsonObject;
      if (typeof entry.at === "number" && entry.at > index) return;
      parts.push(...toolInputStreamParts(entry));
    }
  };
  content.forEach((item, index) => {
    inputsBefore(index);
    const part = item as unknown as LanguageModelV3Content;
    const id = String(index);
    const meta = part.providerMetadata ? { providerMetadata: part.providerMetadata } : {};
    if (part.type === "text" || part.type === "reasoning") {
      const kind = part.type;
      parts.push({ type: `${kind}-start`, id, ...meta } as LanguageModelV3StreamPart);
      parts.push({ type: `${kind}-delta`, id, delta: part.text } as LanguageModelV3StreamPart);
      parts.push({ type: `${kind}-end`, id } as LanguageModelV3StreamPart);
    } else {
      parts.push(part as LanguageModelV3StreamPart);
    }
  });
  inputsBefore(Number.POSITIVE_INFINITY);
  return parts;
}

/** The stream a recorded completion stands for, ending with its finish part. */
export function recordedStreamParts(value: JsonValue): LanguageModelV3StreamPart[] {
  const recorded = value as unknown as RecordedModelResponse;
  const finish: LanguageModelV3StreamPart = {
    type: "finish",
    finishReason: recorded.finishReason as LanguageModelV3FinishReason,
    usage: recorded.usage as unknown as LanguageModelV3Usage,
  };
  if (recorded.providerMetadata)
    finish.providerMetadata = recorded.providerMetadata as unknown as SharedV3ProviderMetadata;
  return [
    { type: "stream-start", warnings: (recorded.warnings ?? []) as unknown as SharedV3Warning[] },
    { type: "response-metadata", ...responseMetadataOf(recorded) },
    ...contentToStreamParts(recorded.content, recorded.toolInputs),
    finish,
  ];
}

/** Tool calls a response asked for (their ids link the tool events to this completion). */
export function toolCallIdsOf(content: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const item of content) {
    const part = item as { type?: unknown; toolCallId?: unknown; providerExecuted?: unknown };
    if (part.type === "tool-call" && typeof part.toolCallId === "string") ids.push(part.toolCallId);
  }
  return ids;
}
