import type { JsonObject, JsonValue } from "../events/json.js";
import {
  anthropicSourceOf,
  classify,
  type HeldData,
  heldValueOf,
  mediaTypeOf,
} from "./atif-held-data.js";
import { isObject, str } from "./extract.js";

// A file held by a content part as bytes or at a URL: a PDF in a user's message, a document or
// a chart a tool gave the model. One of an image media type is shown as an image; ATIF content
// parts are text and images only, so a step names any other file in a text part and lists it
// in `extra.files_omitted`, never its bytes: a reader finds them in the event the note names.

/** A file a content part holds: at a URL or as base64, and its name and uri if given. */
export interface FoundFile extends HeldData {
  filename?: string;
  /** The uri of an MCP resource the file's bytes are (`resource.uri`). */
  uri?: string;
}

/** The AI SDK's parts of a tool's output for the model (`toModelOutput`) of any file. */
const TOOL_OUTPUT_FILES: ReadonlySet<JsonValue | undefined> = new Set([
  "file-data",
  "file-url",
  "media",
]);

/**
 * The file a content part holds, of any media type (one of `image/*` is an image: the caller
 * shows it as one): the AI SDK's `file` part (a user message's, LanguageModelV3), and in a tool's
 * output `file-data`, `file-url`, `media`; LangChain's standard `file` block (`data`, `url`);
 * OpenAI Chat Completions' `file` part (`file: { file_data, filename }`) and OpenAI Agents'
 * tool output `file` (`file`: a data URL or URL, `{ data, mediaType, filename }`,
 * `{ url }`); the Responses API's `input_file` (`file_data`, `file_url`; OpenAI Agents' `file`,
 * a data URL or URL, or `{ url }`); Anthropic's `document` with a `base64` or `url` source.
 * Undefined for any other part, and for one that holds neither bytes nor a URL (a file id:
 * `fileReferenceOf`; text: `fileTextOf`).
 */
export function fileOf(part: JsonObject): FoundFile | undefined {
  const held = heldDataOf(part);
  if (held === undefined) return undefined;
  const file = isObject(part.file) ? part.file : {};
  // LangChain's MCP adapters keep a resource's uri and a link's name in a block's metadata.
  const metadata = isObject(part.metadata) ? part.metadata : {};
  const filename = str(part.filename) ?? str(file.filename) ?? str(metadata.name);
  const uri = held.url === undefined ? str(metadata.uri) : undefined;
  return {
    ...held,
    ...(filename !== undefined ? { filename } : {}),
    ...(uri !== undefined ? { uri } : {}),
  };
}

/**
 * The text a part gives as a document: Anthropic's `document` with a `text` source (its
 * `data`) or a `content` source (its text blocks), LangChain's `file` block with
 * `source_type: "text"` (its `data`, text and not base64). Undefined for any other part.
 */
export function fileTextOf(part: JsonObject): string | undefined {
  if (part.type === "document") {
    const source = anthropicSourceOf(part);
    return source?.kind === "text" ? source.text : undefined;
  }
  return part.type === "file" && part.source_type === "text" ? str(part.data) : undefined;
}

/** What a file part holds of its file: bytes (base64, a data URL) or a URL. */
function heldDataOf(part: JsonObject): HeldData | undefined {
  if (part.type === "document") {
    // Anthropic's: a `text` or `content` source is no file's bytes but text (`fileTextOf`),
    // and a `file` one an id (`fileReferenceOf`).
    const source = anthropicSourceOf(part);
    return source?.kind === "held" ? source.data : undefined;
  }
  const filePart = part.type === "file" || part.type === "input_file";
  if (!(filePart || TOOL_OUTPUT_FILES.has(part.type)) || part.source_type === "text")
    return undefined;
  const value = heldValueOf(part);
  if (value === undefined) return undefined;
  const file = isObject(part.file) ? part.file : {};
  return classify(value, mediaTypeOf(part) ?? str(file.mediaType));
}
