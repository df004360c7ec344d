import type { JsonObject, JsonValue } from "../events/json.js";
import { anthropicSourceOf, atifKind, heldValueOf, mediaTypeOf } from "./atif-held-data.js";
import { formatMediaType } from "./audio-parts.js";
import { isObject, str } from "./extract.js";

// A content part that names a file the provider holds, by the provider's file id, instead of
// holding its bytes or its URL. The ledger has the id, never the file: a step shows it as what
// it is, a reference, never as an image (a 0-byte one) nor as content fetched from anywhere.

/** A file a content part names by a provider's file id. */
export interface FileReference {
  /** The id, or one per provider (`{ openai: "file-...", anthropic: "file_..." }`). */
  fileId: string | JsonObject;
  /**
   * `image` when the part's type, or an AI SDK file part's media type, says it is an image;
   * `audio` for OpenAI Agents' audio; else `file`.
   */
  kind: "image" | "audio" | "file";
  /**
   * The media type an AI SDK `file` part gives beside the id it holds, or OpenAI Agents' audio
   * by its `format`. No other shape read here has one (`@ai-sdk/provider` v3's `file-id` has
   * none).
   */
  mediaType?: string;
}

/**
 * A provider's file id by its form: OpenAI's `file-` and Anthropic's `file_` and letters and
 * digits, no longer than such ids are. The AI SDK records a file part's `data` as a string
 * whether the app gave a file id or bytes (a `Uint8Array` becomes base64), so the form is what
 * tells them apart; base64 (the SDK's and the adapter's) never holds `-` nor `_`, so bytes are
 * never read as an id.
 */
const PROVIDER_FILE_ID = /^file[-_][A-Za-z0-9]{1,64}$/;

/**
 * The file a content part names by a provider's file id: in an AI SDK tool's output for the
 * model (`toModelOutput`'s content, `@ai-sdk/provider` v3), `image-file-id` (an image) and
 * `file-id` (any file: the spec gives it no media type); an AI SDK `file` part whose
 * `data` is a provider's file id by its form (`PROVIDER_FILE_ID`: the SDK's documented way to
 * pass an OpenAI file, `data: "file-..."` with its media type); LangChain's standard `file` and
 * `image` blocks with a `fileId` (v1) or `source_type: "id"` and `id` (v0); OpenAI Chat
 * Completions' `file` part with `file: { file_id }`, and OpenAI Agents' tool output `file`
 * with `file: { id }` and `image` with `image: { fileId }` or `image: { id }`; Anthropic's
 * `image` and `document` blocks with `source: { type: "file", file_id }` (LangChain's
 * ChatAnthropic passes them through); the OpenAI Responses API's `input_image` and
 * `input_file` with a `file_id` (LangChain's ChatOpenAI with the Responses API), as OpenAI
 * Agents' input items give them (`image: { id }`, `file: { id }`), and its audio
 * (`audio: { id }`, its media type by its `format`). Undefined for any other part, and for an
 * image part that holds its image too.
 */
export function fileReferenceOf(part: JsonObject): FileReference | undefined {
  if (part.type === "image-file-id" || part.type === "file-id") {
    const fileId = fileIdOf(part.fileId);
    if (fileId === undefined) return undefined;
    return { fileId, kind: part.type === "image-file-id" ? "image" : "file" };
  }
  if (isObject(part.source) && (part.type === "image" || part.type === "document")) {
    const source = anthropicSourceOf(part);
    if (source?.kind !== "file") return undefined;
    return { fileId: source.fileId, kind: part.type === "image" ? "image" : "file" };
  }
  if (part.type === "audio" && isObject(part.audio)) {
    // OpenAI Agents' audio content by a file id (agents-core types/protocol.mjs:115).
    const fileId = str(part.audio.id);
    const mediaType = formatMediaType(str(part.format));
    if (fileId === undefined) return undefined;
    return { fileId, kind: "audio", ...(mediaType !== undefined ? { mediaType } : {}) };
  }
  if (part.type === "file" || part.type === "image") {
    // An image that holds its image too (OpenAI Agents' `imageUrl` beside a `fileId`) is that
    // image: the SDK gives the model the image string first, the id only when there is none
    // (agents-core runner/toolOutputNormalization.mjs:75-105).
    if (part.type === "image" && heldValueOf(part) !== undefined) return undefined;
    const fileId = namedFileIdOf(part);
    if (fileId === undefined) return undefined;
    const mediaType = mediaTypeOf(part);
    const image = part.type === "image" || mediaType?.startsWith("image/") === true;
    return {
      fileId,
      kind: image ? "image" : "file",
      ...(mediaType !== undefined ? { mediaType } : {}),
    };
  }
  if (part.type === "input_image" || part.type === "input_file") {
    const image = part.type === "input_image";
    const given = image ? part.image : part.file;
    // A part that holds the file too (a URL, bytes) shows it, not the id beside it.
    const held = image ? [given, part.image_url] : [given, part.file_data, part.file_url];
    if (held.some((value) => str(value) !== undefined)) return undefined;
    const fileId = str(part.file_id) ?? (isObject(given) ? str(given.id) : undefined);
    return fileId === undefined ? undefined : { fileId, kind: image ? "image" : "file" };
  }
  return undefined;
}

/** The provider's file id a `file` or `image` part (not Anthropic's) names, if any. */
function namedFileIdOf(part: JsonObject): string | undefined {
  const file = isObject(part.file) ? part.file : undefined;
  const data = str(part.data);
  // OpenAI Agents' tool output image by a file id: `image: { fileId }` or `{ id }`
  // (agents-core runner/toolOutputNormalization.mjs:67).
  const image = part.type === "image" && isObject(part.image) ? part.image : undefined;
  return (
    str(part.fileId) ??
    (image !== undefined ? (str(image.fileId) ?? str(image.id)) : undefined) ??
    (part.source_type === "id" ? str(part.id) : undefined) ??
    (file !== undefined ? (str(file.file_id) ?? str(file.id)) : undefined) ??
    (part.type === "file" && data !== undefined && PROVIDER_FILE_ID.test(data) ? data : undefined)
  );
}

/** A file id: a non-empty string, or an object of them by provider name. */
function fileIdOf(value: JsonValue | undefined): string | JsonObject | undefined {
  const id = str(value);
  if (id !== undefined) return id;
  if (!isObject(value)) return undefined;
  const ids = Object.entries(value).filter(([, each]) => str(each) !== undefined);
  return ids.length > 0 ? Object.fromEntries(ids) : undefined;
}

/** The id as text: itself, or each provider's (`openai file-a, anthropic file_b`). */
function idText(fileId: string | JsonObject): string {
  if (typeof fileId === "string") return fileId;
  return Object.entries(fileId)
    .map(([provider, id]) => `${provider} ${String(id)}`)
    .join(", ");
}

/**
 * The text part standing for a referenced file: `[image omitted: provider file id file-a, ...]`.
 */
export function fileReferenceText(reference: FileReference): string {
  const kind = atifKind(reference.kind);
  const mediaType = reference.mediaType ?? "media type unknown";
  return `[${kind} omitted: provider file id ${idText(reference.fileId)}, ${mediaType}]`;
}

/**
 * What a referenced file leaves in a step's `extra.images_omitted` (an image) or
 * `extra.files_omitted`: the part, its media type (null when the part names none), its id, and
 * the event whose payload names it (`eventId`; the file's bytes are not there).
 */
export function fileReferenceNote(
  reference: FileReference,
  part: number,
  eventId: string,
): JsonObject {
  return {
    part,
    media_type: reference.mediaType ?? null,
    file_id: reference.fileId,
    reason: "held by the provider, named by its file id: no bytes in the ledger",
    event_id: eventId,
  };
}
