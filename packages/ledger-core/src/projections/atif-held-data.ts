import type { JsonObject } from "../events/json.js";
import type { FoundFile } from "./atif-files.js";
import { isObject, str, textOf } from "./extract.js";

// What a content part holds of a file or an image: a URL, or bytes as base64 in the part
// itself. Shared by the images a step shows and the other files it names, and so is the text
// part naming one a step cannot show.

/** A file's or image's content as a part holds it: at a URL, or as base64 in the part. */
export interface HeldData {
  url?: string;
  base64?: string;
  mediaType?: string;
}

/**
 * A part's media type, as each framework names it (`mediaType`, `mimeType`, `mime_type`; an
 * OpenAI Agents tool output image's `image.mediaType`).
 */
export function mediaTypeOf(part: JsonObject): string | undefined {
  const named = str(part.mediaType) ?? str(part.mimeType) ?? str(part.mime_type);
  if (named !== undefined || part.type !== "image" || !isObject(part.image)) return named;
  return str(part.image.mediaType);
}

function withType<Data extends HeldData>(data: Data, mediaType: string | undefined): Data {
  return mediaType === undefined ? data : { ...data, mediaType };
}

/** A string that is a data URL, another URL (a scheme before `:`), or else base64 bytes. */
export function classify(value: string, mediaType: string | undefined): HeldData {
  const data = /^data:([^;,]*)(;base64)?,/i.exec(value);
  if (data) return withType({ base64: value.slice(data[0].length) }, str(data[1]) ?? mediaType);
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) return withType({ url: value }, mediaType);
  return withType({ base64: value }, mediaType);
}

/**
 * The string a part holds its image or file in (bytes as base64 or a data URL, or a URL), read
 * where each framework puts it: LangChain's and MCP's `image` (`image`, `url`, `data`; OpenAI
 * Agents' tool output `image.data`, `image.url`, `imageUrl`), OpenAI's
 * `image_url` and the Responses API's `input_image` (`image_url`, OpenAI Agents' `image`), its
 * `input_file` (`file_data`, `file_url`, OpenAI Agents' `file` or `file.url`), a `file` part
 * (the AI SDK's and LangChain's `data` or `url`; OpenAI Chat Completions' `file.file_data`,
 * OpenAI Agents' tool output `file` or `file.data`, `file.url`), any other part's `data` or
 * `url` (the AI SDK's tool output parts). Whether the part is an image or a file at all is its
 * type's to say: the caller's.
 */
export function heldValueOf(part: JsonObject): string | undefined {
  const file = part.file;
  switch (part.type) {
    case "image": {
      // OpenAI Agents' tool output: `image` a string, or `{ data, mediaType }` or `{ url }`;
      // else `imageUrl` beside the type, as the SDK still takes it (toolOutputNormalization).
      const image = part.image;
      const held = isObject(image) ? (str(image.data) ?? str(image.url)) : str(image);
      return held ?? str(part.imageUrl) ?? str(part.url) ?? str(part.data);
    }
    case "image_url":
    case "input_image": {
      const image = part.image_url;
      const url = isObject(image) ? str(image.url) : str(image);
      // OpenAI Agents' own input item: `image`, a URL or a data URL (`{ id }` is a file id).
      return part.type === "input_image" ? (url ?? str(part.image)) : url;
    }
    case "input_file":
      return (
        str(part.file_data) ??
        str(part.file_url) ??
        str(file) ??
        (isObject(file) ? str(file.url) : undefined)
      );
    case "file":
      if (isObject(file)) return str(file.file_data) ?? str(file.data) ?? str(file.url);
      return str(file) ?? str(part.data) ?? str(part.url);
    default:
      return str(part.data) ?? str(part.url);
  }
}

/** The size of base64 content in bytes. */
export function base64Size(base64: string): number {
  const trimmed = base64.replace(/\s/g, "");
  const padding = trimmed.endsWith("==") ? 2 : trimmed.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

/**
 * What an Anthropic `image` or `document` block's `source` gives, read once: a provider's file
 * id (`file`), text (a document's `text` source, its `data`, or `content` source, its text
 * blocks), else what it holds (a `url`, or `data` as base64). Undefined for any other part.
 */
export function anthropicSourceOf(
  part: JsonObject,
):
  | { kind: "held"; data: HeldData }
  | { kind: "file"; fileId: string }
  | { kind: "text"; text: string }
  | undefined {
  if ((part.type !== "image" && part.type !== "document") || !isObject(part.source))
    return undefined;
  const source = part.source;
  if (source.type === "file") {
    const fileId = str(source.file_id);
    return fileId === undefined ? undefined : { kind: "file", fileId };
  }
  if (source.type === "text" || source.type === "content") {
    const content = source.type === "text" ? source.data : source.content;
    const text = typeof content === "string" ? content : textOf(content);
    return text.length > 0 ? { kind: "text", text } : undefined;
  }
  const mediaType = str(source.media_type) ?? mediaTypeOf(part);
  const url = str(source.url);
  if (url !== undefined) return { kind: "held", data: withType({ url }, mediaType) };
  const data = str(source.data);
  return data === undefined
    ? undefined
    : { kind: "held", data: withType({ base64: data }, mediaType) };
}

/**
 * What a step says of bytes a part holds (`data.base64`): their size in its text (`7 bytes`),
 * and in its `extra` note the size and where they are (the event whose payload holds them).
 * A string that is a provider's file id by its form never comes here: it is named as the id
 * it is (`fileReferenceOf`).
 */
function heldBytes(data: HeldData): { text: string; note: JsonObject } {
  const size = base64Size(data.base64 ?? "");
  return {
    text: `${String(size)} bytes`,
    note: { size_bytes: size, reason: "bytes recorded in the ledger" },
  };
}

/** A file's kind to ATIF: an image, or any other file. */
export type AtifFileKind = "image" | "file";

/** The ATIF kind of a file of `kind`: audio is a file to ATIF, whose parts are text and images only. */
export function atifKind(kind: "image" | "audio" | "file"): AtifFileKind {
  return kind === "image" ? "image" : "file";
}

/** Why a step cannot show a part at a URL: an image's media type, any other file at all. */
const URL_REASONS = {
  image: "media type not one ATIF takes",
  file: "ATIF content parts are text and images only",
} as const;

/**
 * The text part standing for an image or another file a step cannot show
 * (`[image omitted: image/png, 7 bytes]`, `[file omitted: report.pdf, application/pdf, 7 bytes]`,
 * `[file omitted: https://..., application/pdf]`) and its entry of `extra.images_omitted` or
 * `extra.files_omitted`: the part, media type, name and an MCP resource's uri if given, size or
 * URL, and the event whose payload holds it (`eventId`), where a reader finds its bytes.
 */
export function omittedPart({
  kind,
  data,
  part,
  eventId,
}: {
  kind: AtifFileKind;
  data: FoundFile;
  part: number;
  eventId: string;
}): { text: string; note: JsonObject } {
  const { filename, uri } = data;
  const mediaType = data.mediaType ?? "media type unknown";
  const named: JsonObject = { part, media_type: data.mediaType ?? null };
  if (filename !== undefined) named.filename = filename;
  if (uri !== undefined) named.uri = uri;
  if (data.url !== undefined) {
    return {
      text: `[${kind} omitted: ${data.url}, ${mediaType}]`,
      note: { ...named, url: data.url, reason: URL_REASONS[kind], event_id: eventId },
    };
  }
  const bytes = heldBytes(data);
  const name = [filename, uri].map((each) => (each !== undefined ? `${each}, ` : "")).join("");
  return {
    text: `[${kind} omitted: ${name}${mediaType}, ${bytes.text}]`,
    note: { ...named, ...bytes.note, event_id: eventId },
  };
}
