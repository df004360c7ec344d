import type { JsonObject, JsonValue } from "../events/json.js";
import type { FileReference } from "./atif-file-references.js";
import type { FoundFile } from "./atif-files.js";
import { base64Size } from "./atif-held-data.js";
import { type ShownPart, shownPartOf } from "./content-media.js";
import { textOf } from "./extract.js";
import { isObject } from "./langchain-message.js";
import { reasoningTextOf } from "./model-completions.js";

// A recorded message's content as the parts of OpenTelemetry's GenAI messages
// (`gen_ai.input.messages`, gen-ai-input-messages.json): text, reasoning, a file at a URL
// (`uri`), one a provider holds by its id (`file`), and one whose bytes the ledger holds,
// named without them (see `omittedBlob`).

/** The parts of a model's answer that are the tool calls it asked for: read from `toolCalls`. */
const TOOL_CALL_PARTS: ReadonlySet<JsonValue | undefined> = new Set([
  "tool-call",
  "function_call",
  "tool_use",
]);

/**
 * A media type's modality, as the conventions name them (`image`, `audio`, `video`); any other
 * file (a PDF, a text file) is a `document`, a modality the conventions leave open. A part that
 * is an image or audio whatever its media type (`kind`) is of that modality.
 */
function modalityOf(mediaType: string | undefined, kind: "image" | "audio" | "file"): string {
  if (kind !== "file") return kind;
  const top = mediaType?.split("/")[0]?.toLowerCase();
  return top === "image" || top === "audio" || top === "video" ? top : "document";
}

function mimeType(mediaType: string | undefined): JsonObject {
  return mediaType === undefined ? {} : { mime_type: mediaType };
}

/** The type of the part standing for a file whose bytes the ledger holds (`omittedBlob`). */
const BLOB_OMITTED = "agent_ledger.blob_omitted";

/**
 * A file whose bytes the part held: named, never its bytes. A blob part's `content` is the
 * whole file as base64 (a photo is megabytes), and exporters and backends cap an attribute's
 * length: the JSON of every message of the call, cut, would parse no more. The bytes stay in
 * the ledger, in the event named (`event_id`).
 */
export function omittedBlob(file: FoundFile, modality: string, eventId: string): JsonObject {
  const part: JsonObject = {
    type: BLOB_OMITTED,
    modality,
    ...mimeType(file.mediaType),
    size_bytes: base64Size(file.base64 ?? ""),
    event_id: eventId,
  };
  if (file.filename !== undefined) part.filename = file.filename;
  if (file.uri !== undefined) part.uri = file.uri;
  return part;
}

function fileIdPart(reference: FileReference): JsonObject {
  const { fileId } = reference;
  // An id per provider (the AI SDK's `{ openai, anthropic }`): the first, and all of them.
  const first = typeof fileId === "string" ? fileId : String(Object.values(fileId)[0]);
  return {
    type: "file",
    modality: modalityOf(reference.mediaType, reference.kind),
    ...mimeType(reference.mediaType),
    file_id: first,
    ...(typeof fileId === "string" ? {} : { file_ids: fileId }),
  };
}

function mediaPart(shown: ShownPart, eventId: string): JsonObject {
  if (shown.kind === "text") return { type: "text", content: shown.text };
  if (shown.kind === "reference") return fileIdPart(shown.reference);
  const { file } = shown;
  const modality = modalityOf(file.mediaType, shown.kind);
  if (file.url === undefined) return omittedBlob(file, modality, eventId);
  return { type: "uri", modality, ...mimeType(file.mediaType), uri: file.url };
}

/**
 * `value` (a tool's arguments or result, as recorded), each part in it that holds a file's
 * bytes (an image, audio or another file as base64 or a data URL, wherever it is nested:
 * see `shownPartOf`) replaced by its omitted form (`omittedBlob`), `eventId` the event whose
 * payload holds the bytes. All else is kept as it was: text, a file at a URL or named by id.
 */
export function withBytesOmitted(value: JsonValue, eventId: string): JsonValue {
  if (Array.isArray(value)) return value.map((item) => withBytesOmitted(item, eventId));
  if (!isObject(value)) return value;
  const shown = shownPartOf(value);
  const part = shown === undefined ? undefined : mediaPart(shown, eventId);
  if (part?.type === BLOB_OMITTED) return part;
  // Defined, not assigned: a recorded `__proto__` key stays a key.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, withBytesOmitted(item, eventId)]),
  );
}

/**
 * The parts of a message's content (a string, or a list of content parts as any framework
 * records them), `eventId` the event whose payload holds it. A tool call the content holds is
 * left out: the caller adds it from the message's tool calls, read once by `completionOf`.
 */
export function contentParts(content: JsonValue, eventId: string): JsonObject[] {
  if (typeof content === "string")
    return content.length > 0 ? [{ type: "text", content: content }] : [];
  if (!Array.isArray(content)) {
    const text = content === null ? "" : textOf(content);
    return text.length > 0 ? [{ type: "text", content: text }] : [];
  }
  const parts: JsonObject[] = [];
  for (const part of content) {
    if (isObject(part)) {
      if (TOOL_CALL_PARTS.has(part.type)) continue;
      const reasoning = reasoningTextOf(part);
      if (reasoning !== undefined) {
        if (reasoning.length > 0) parts.push({ type: "reasoning", content: reasoning });
        continue;
      }
      const shown = shownPartOf(part);
      if (shown !== undefined) {
        parts.push(mediaPart(shown, eventId));
        continue;
      }
    }
    const text = textOf([part]);
    if (text.length > 0) parts.push({ type: "text", content: text });
  }
  return parts;
}
