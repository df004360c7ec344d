import { type JsonValue, NonSerializableError } from "@agent-ledger/core";

/** Base64 of bytes (how binary content is kept in a plain-JSON payload). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Converts an SDK value to plain JSON the way it would go over the wire: undefined properties
 * are dropped, Dates become ISO strings, URLs their href, bytes base64. Deterministic, so the
 * same request re-executed after a crash hashes the same.
 */
export function toJsonValue(value: unknown, path = "$"): JsonValue {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, item: unknown) =>
      item instanceof Uint8Array ? toBase64(item) : item,
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new NonSerializableError(path, `not JSON-serializable (${reason})`);
  }
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}
