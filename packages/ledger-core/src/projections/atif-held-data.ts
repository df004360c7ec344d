import type { JsonObject } from "../events/json.js";
import { str } from "./extract.js";

// What a content part holds of a file or an image: a URL, or bytes as base64 in the part
// itself. Shared by the images a step shows and the other files it names.

/** A file's or image's content as a part holds it: at a URL, or as base64 in the part. */
export interface HeldData {
  url?: string;
  base64?: string;
  mediaType?: string;
}

export function withType<Data extends HeldData>(data: Data, mediaType: string | undefined): Data {
  return mediaType === undefined ? data : { ...data, mediaType };
}

/** A string that is a data URL, another URL (a scheme before `:`), or else base64 bytes. */
export function classify(value: string, mediaType: string | undefined): HeldData {
  const data = /^data:([^;,]*)(;base64)?,/i.exec(value);
  if (data) return withType({ base64: value.slice(data[0].length) }, str(data[1]) ?? mediaType);
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) return withType({ url: value }, mediaType);
  return withType({ base64: value }, mediaType);
}

/** The size of base64 content in bytes. */
export function base64Size(base64: string): number {
  const trimmed = base64.replace(/\s/g, "");
  const padding = trimmed.endsWith("==") ? 2 : trimmed.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

/**
 * What a step says of bytes a part holds (`data.base64`): their size in its text (`7 bytes`),
 * and in its `extra` note the size and where they are (the event whose payload holds them).
 * A string that is a provider's file id by its form never comes here: it is named as the id
 * it is (`fileReferenceOf`).
 */
export function heldBytes(data: HeldData): { text: string; note: JsonObject } {
  const size = base64Size(data.base64 ?? "");
  return {
    text: `${String(size)} bytes`,
    note: { size_bytes: size, reason: "bytes recorded in the ledger" },
  };
}
