import type { JsonObject } from "../events/json.js";
import type { FoundFile } from "./atif-files.js";
import { classify, mediaTypeOf } from "./atif-held-data.js";
import { isObject, str } from "./extract.js";

// The audio a content part holds as bytes, as each framework records it. ATIF content parts are
// text and images only, so a step names it in text and lists it in `extra.files_omitted` (media
// type, size, the event holding its bytes), as any other file it cannot show; OpenTelemetry
// names it as a blob of the `audio` modality.

/** An audio format (`wav`, `mp3`) as a media type, as LangChain's block translator names it. */
export function formatMediaType(format: string | undefined): string | undefined {
  if (format === undefined) return undefined;
  return format.includes("/") ? format : `audio/${format}`;
}

/**
 * The audio a part holds as base64, as a file: MCP's `audio` (`{ type: "audio", data,
 * mimeType }`, LangChain's standard audio block too), OpenAI Chat Completions' `input_audio`
 * (`{ input_audio: { data, format } }`, which LangChain messages may carry as it is), OpenAI
 * Agents' audio input content (`{ type: "audio", audio, format? }`). Undefined for any other
 * part, and for one without its bytes (an OpenAI Agents `audio: { id }` names a file:
 * `fileReferenceOf`).
 */
export function audioOf(part: JsonObject): FoundFile | undefined {
  if (part.type === "input_audio") {
    const audio = isObject(part.input_audio) ? part.input_audio : {};
    const data = str(audio.data);
    return data === undefined ? undefined : classify(data, formatMediaType(str(audio.format)));
  }
  if (part.type !== "audio") return undefined;
  const data = str(part.data);
  if (data !== undefined) return classify(data, mediaTypeOf(part));
  const audio = str(part.audio);
  return audio === undefined ? undefined : classify(audio, formatMediaType(str(part.format)));
}
