import type { JsonObject, JsonValue } from "../events/json.js";
import { type FileReference, fileReferenceOf } from "./atif-file-references.js";
import { type FoundFile, fileOf, fileTextOf } from "./atif-files.js";
import {
  anthropicSourceOf,
  classify,
  type HeldData,
  heldValueOf,
  mediaTypeOf,
} from "./atif-held-data.js";
import { mcpResourceOf } from "./atif-mcp-resources.js";
import { audioOf } from "./audio-parts.js";
import { isObject } from "./langchain-message.js";
import { modelOutputOf } from "./tool-model-output.js";

// The images and files a content part holds or names, as each framework records them: what
// ATIF's steps and OpenTelemetry's message parts both show, each in its own form.

/** The AI SDK's parts of a tool's output for the model (`toModelOutput`) that are images. */
const TOOL_OUTPUT_IMAGES: ReadonlySet<JsonValue | undefined> = new Set(["image-data", "image-url"]);

/**
 * The parts that are images whatever their media type: each framework's image part, and OpenAI
 * Agents' computer call screenshot (`{ type: "computer_screenshot", data }`, agents-core
 * types/protocol.mjs:219: a data URL or a URL).
 */
const IMAGE_PARTS: ReadonlySet<JsonValue | undefined> = new Set([
  "image",
  "image_url",
  "input_image",
  "computer_screenshot",
  ...TOOL_OUTPUT_IMAGES,
]);

/**
 * The image an image part holds, as each framework records one: the AI SDK's `image` part, and
 * in a tool's output `image-data`, `image-url`; OpenAI's `image_url` (LangChain's too), the
 * Responses API's `input_image` (`image_url`; OpenAI Agents' `image`), Anthropic's `image`
 * with a `source`, LangChain's standard `image` block, MCP's `image` (`data`, `mimeType`).
 * Undefined for any other part: a file part of an image media type is read by `fileOf`.
 */
function imageOf(part: JsonObject): HeldData | undefined {
  if (part.type === "image" && isObject(part.source)) {
    // A file id (Anthropic's `source: { type: "file" }`) holds no bytes: `fileReferenceOf`.
    const source = anthropicSourceOf(part);
    return source?.kind === "held" ? source.data : undefined;
  }
  if (!IMAGE_PARTS.has(part.type)) return undefined;
  const value = heldValueOf(part);
  // No string where the image would be: nothing to show (a part naming a provider's file id
  // is read before this, by `fileReferenceOf`).
  return value === undefined ? undefined : classify(value, mediaTypeOf(part));
}

/**
 * What a part shows besides text: an image, audio or another file it holds, or one it names by
 * id.
 */
export type ShownPart =
  | { kind: "image" | "audio" | "file"; file: FoundFile }
  | { kind: "reference"; reference: FileReference }
  | { kind: "text"; text: string };

/**
 * What a content part shows besides text, read once for every projection that shows content
 * (ATIF's steps, OpenTelemetry's message parts): an MCP resource (see `mcpResourceOf`), audio
 * (`audioOf`), a file named by a provider's id (`fileReferenceOf`), an image (`imageOf`) or
 * another file (`fileOf`) it holds as bytes or at a URL, or a document given as text
 * (`fileTextOf`).
 * Undefined for a part that is text or anything else.
 */
export function shownPartOf(part: JsonObject): ShownPart | undefined {
  const resource = mcpResourceOf(part);
  if (resource !== undefined) return resource;
  const audio = audioOf(part);
  if (audio !== undefined) return { kind: "audio", file: audio };
  const reference = fileReferenceOf(part);
  if (reference !== undefined) return { kind: "reference", reference };
  const image = imageOf(part);
  if (image !== undefined) return { kind: "image", file: image };
  const file = fileOf(part);
  // A file of an image media type (recorded beside it, or its data URL's) is an image: the
  // SDKs give it to the model as one (OpenAI Agents' tool output `file` becomes an
  // `input_file` of an image data URL, the AI SDK's file part an image).
  if (file?.mediaType?.startsWith("image/")) return { kind: "image", file };
  if (file !== undefined) return { kind: "file", file };
  const text = fileTextOf(part);
  return text === undefined ? undefined : { kind: "text", text };
}

/**
 * The content parts of what a tool gave: the AI SDK's output for the model
 * (`{ type: "content", value: [...] }`, as `toModelOutput` gives it), MCP's result
 * (`{ content: [...] }`), a list of parts (a LangChain ToolMessage's content, an OpenAI
 * Agents tool output), or one OpenAI Agents tool output of a file or an image
 * (`{ type: "file", file }`, `{ type: "image", image | imageUrl | fileId }`: the SDK gives the
 * model the file, not JSON) or of a computer call's screenshot (`computer_screenshot`), or one
 * MCP content item of an image, audio or a resource (`{ type: "image", data }`,
 * `{ type: "audio", data }`, `resource`, `resource_link`: OpenAI Agents records an MCP tool's
 * only item alone). Undefined for any other value (a text, a JSON result).
 */
export function toolContentParts(content: JsonValue | undefined): JsonValue[] | undefined {
  if (Array.isArray(content)) return content;
  if (!isObject(content)) return undefined;
  // The AI SDK's: only a `content` output holds parts; a `json` one is JSON to the model.
  const output = modelOutputOf(content);
  if (output !== undefined) return output.kind === "parts" ? output.parts : undefined;
  if (content.type === "file" && content.file !== undefined) return [content];
  // An image part that shows an image (or names one by id), read as `shownPartOf` reads it.
  if (content.type === "image" && shownPartOf(content) !== undefined) return [content];
  if (
    (content.type === "audio" || content.type === "computer_screenshot") &&
    content.data !== undefined
  )
    return [content];
  if (content.type === "resource" || content.type === "resource_link") return [content];
  return Array.isArray(content.content) ? content.content : undefined;
}
