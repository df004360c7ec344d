import type { JsonObject, JsonValue } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { toJsonValue } from "./plain-json.js";
import { decodeThrown, encodeThrown } from "./replayed-errors.js";

/**
 * How a stream that failed is kept in its `model.failed` (`partial.stream`), so that a replay
 * emits what the live run got, part for part. An error part does not end a stream in the AI
 * SDK: the SDK reads on, runs the tool calls that still come, and takes the finish part's
 * reason. So the record holds every part up to the stream's real end, error parts in their
 * place, and how it ended: closed (with or without a finish part), or with a read error
 * (`thrown`), which the SDK throws from `fullStream` and its promises.
 */
export interface RecordedStream {
  /** Version of this shape: a replay refuses shapes it does not know. */
  version: 1;
  parts: JsonValue[];
  /** The error the stream ended with (an abort, a read error), as `encodeThrown` keeps it. */
  thrown?: JsonObject;
}

export const RECORDED_STREAM_VERSION = 1;

function encodePart(part: LanguageModelV3StreamPart): JsonValue {
  if (part.type === "error") return { type: "error", error: encodeThrown(part.error) };
  // Dates become ISO strings and bytes base64, as in a recorded completion.
  return toJsonValue(part, "$.partial.stream.parts");
}

/** The record of a stream's parts; `end` is what it ended with, if it did not close. */
export function encodeStream(
  parts: readonly LanguageModelV3StreamPart[],
  end: { thrown?: unknown } = {},
): RecordedStream {
  const recorded: RecordedStream = {
    version: RECORDED_STREAM_VERSION,
    parts: parts.map(encodePart),
  };
  if ("thrown" in end) recorded.thrown = encodeThrown(end.thrown);
  return recorded;
}

function decodePart(recorded: JsonValue): LanguageModelV3StreamPart {
  const part = recorded as JsonObject;
  if (part.type === "error") return { type: "error", error: decodeThrown(part.error) };
  if (part.type === "response-metadata" && typeof part.timestamp === "string")
    return { ...part, timestamp: new Date(part.timestamp) } as LanguageModelV3StreamPart;
  // A file's bytes stay base64: the SDK takes a file's data as bytes or as a base64 string.
  return part as unknown as LanguageModelV3StreamPart;
}

/** The parts a recorded stream emits again, and the error it ends with, if any. */
export function decodeStream(recorded: RecordedStream): {
  parts: LanguageModelV3StreamPart[];
  thrown?: { error: unknown };
} {
  const parts = recorded.parts.map(decodePart);
  return recorded.thrown === undefined
    ? { parts }
    : { parts, thrown: { error: decodeThrown(recorded.thrown) } };
}
