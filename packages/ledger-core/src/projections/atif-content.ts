import type { JsonObject, JsonValue } from "../events/json.js";
import { fileReferenceNote, fileReferenceText } from "./atif-file-references.js";
import { atifKind, type HeldData, omittedPart } from "./atif-held-data.js";
import type { AtifContentPart, AtifImageMediaType } from "./atif-types.js";
import { shownPartOf } from "./content-media.js";
import { textOf } from "./extract.js";
import { isObject } from "./langchain-message.js";
import { modelOutputOf } from "./tool-model-output.js";

// A user's message as an ATIF step's `message`, and a tool's result as its observation's
// `content`: its text, its images as ATIF image parts (ATIF v1.6+:
// `{ type: "image", source: { media_type, path } }`, a path being a file or a URL), and the
// files it holds or names by a provider's file id as text parts naming them (see `fileOf`,
// `fileReferenceOf`).

const ATIF_IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

const EXTENSION_TYPES: [RegExp, AtifImageMediaType][] = [
  [/\.png$/i, "image/png"],
  [/\.jpe?g$/i, "image/jpeg"],
  [/\.gif$/i, "image/gif"],
  [/\.webp$/i, "image/webp"],
];

/** The ATIF media type of an image: the one recorded, else its URL's extension. */
function atifMediaType(image: HeldData): AtifImageMediaType | undefined {
  const recorded = image.mediaType?.toLowerCase();
  if (recorded !== undefined) {
    const normal = recorded === "image/jpg" ? "image/jpeg" : recorded;
    return ATIF_IMAGE_TYPES.has(normal) ? (normal as AtifImageMediaType) : undefined;
  }
  if (image.url === undefined) return undefined;
  const path = image.url.split(/[?#]/)[0] ?? "";
  return EXTENSION_TYPES.find(([pattern]) => pattern.test(path))?.[1];
}

/**
 * A user message's `content` as an ATIF step message: its text when it holds no image nor
 * other file and names no file by a provider's id (as `textOf` gives it); else content parts,
 * text parts and an image part per image at a URL (ATIF's `path` may be a URL). An image
 * recorded as bytes has no path to point to: it is a text part naming it (`[image omitted:
 * image/png, 7 bytes]`), and `extra.images_omitted` lists it with its media type, size and
 * the id of the event (`eventId`) whose payload holds it, where a reader finds its bytes; so
 * is an image at a URL whose media type ATIF does not take. A file part (see `fileOf`) of an
 * `image/*` media type is an image; any other file, as bytes or at a URL, is a text part naming
 * it, listed in `extra.files_omitted`, and so is audio (see `audioOf`).
 * A file named by a provider's file id (see `fileReferenceOf`) is a text part naming the id,
 * listed in `extra.images_omitted` (an image) or `extra.files_omitted`. A document given as
 * text (see `fileTextOf`) is a text part of its text. `extra` holds only the lists that are
 * not empty.
 */
export function atifMessageOf(
  content: JsonValue | undefined,
  eventId: string,
): { message: string | AtifContentPart[]; extra: JsonObject } {
  const parts = Array.isArray(content) ? content : [];
  const found = parts.map((part) => (isObject(part) ? shownPartOf(part) : undefined));
  if (found.every((shown) => shown === undefined)) return { message: textOf(content), extra: {} };
  const message: AtifContentPart[] = [];
  const images: JsonObject[] = [];
  const files: JsonObject[] = [];
  for (const [index, part] of parts.entries()) {
    const shown = found[index];
    if (shown === undefined) {
      const text = textOf([part]);
      if (text.length > 0) message.push({ type: "text", text });
      continue;
    }
    if (shown.kind === "reference") {
      const { reference } = shown;
      const note = fileReferenceNote(reference, message.length, eventId);
      (reference.kind === "image" ? images : files).push(note);
      message.push({ type: "text", text: fileReferenceText(reference) });
      continue;
    }
    if (shown.kind === "text") {
      message.push({ type: "text", text: shown.text });
      continue;
    }
    const { file } = shown;
    const kind = atifKind(shown.kind);
    const mediaType = kind === "image" ? atifMediaType(file) : undefined;
    if (file.url !== undefined && mediaType !== undefined) {
      message.push({ type: "image", source: { media_type: mediaType, path: file.url } });
      continue;
    }
    const { text, note } = omittedPart({ kind, data: file, part: message.length, eventId });
    (kind === "image" ? images : files).push(note);
    message.push({ type: "text", text });
  }
  return {
    message,
    extra: {
      ...(images.length > 0 ? { images_omitted: images } : {}),
      ...(files.length > 0 ? { files_omitted: files } : {}),
    },
  };
}

/** ATIF tool arguments are a JSON object: a plain value (a string tool's input) is `{ input }`. */
export function argumentsObject(args: JsonValue | undefined): JsonObject {
  if (isObject(args)) return args;
  return args === undefined || args === null ? {} : { input: args };
}

/** A tool's result as an observation's text: a string as it is, another value as its JSON. */
export function asContent(value: JsonValue | undefined): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The parts that are text alone: MCP's and LangChain's `text`, OpenAI's. */
const TEXT_PARTS: ReadonlySet<JsonValue | undefined> = new Set([
  "text",
  "input_text",
  "output_text",
]);

/** The frameworks that give the model a list of text parts a tool returned as their text. */
const TEXT_PARTS_READ: ReadonlySet<string | undefined> = new Set(["openai-agents", "langchain"]);

/**
 * A tool's recorded result as an observation's text, as the model read it, by the framework of
 * the actor that called it (`framework`): OpenAI Agents gives the model a text output (`{ type:
 * "text", text }`, read by `modelOutputOf`) as an `input_text` item (agents-core
 * runner/toolExecution.mjs:81), and it and LangChain (a ToolMessage's content) give a list of
 * text parts as their text. Any other value, and any result of another framework's tool (the
 * AI SDK records what `execute` returned, which the SDK sends the model as JSON unless it is a
 * string), as `asContent` gives it.
 */
export function resultContent(value: JsonValue | undefined, framework?: string): string | null {
  if (framework === "openai-agents") {
    const output = modelOutputOf(value);
    if (output?.kind === "value" && typeof output.value === "string") return output.value;
  }
  const textParts =
    TEXT_PARTS_READ.has(framework) &&
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (part) => isObject(part) && TEXT_PARTS.has(part.type) && typeof part.text === "string",
    );
  return textParts ? textOf(value) : asContent(value);
}
