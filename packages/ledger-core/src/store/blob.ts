import { createHash } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { deflateRaw, prepareDictionary } from "../codec/deflate.js";
import {
  InvalidEventError,
  LedgerError,
  NonSerializableError,
  NotFoundError,
} from "../events/errors.js";
import { assertId } from "../events/ids.js";
import { hasLoneSurrogate } from "../events/json.js";

const blobRefPattern = /^sha256:[0-9a-f]{64}$/;

/** True when `value` is a `sha256:<64 hex>` blob reference. */
export function isBlobRef(value: unknown): value is string {
  return typeof value === "string" && blobRefPattern.test(value);
}

/**
 * Bytes of blob content (strings are stored as UTF-8). A string with a lone surrogate has no
 * UTF-8 form: encoding it would store U+FFFD instead, so two different strings would share one
 * reference and `getBlob` would return text the caller never put. It is refused instead.
 */
export function blobBytes(content: Uint8Array | string, path = "$"): Uint8Array {
  if (typeof content === "string") {
    if (hasLoneSurrogate(content))
      throw new NonSerializableError(path, "a string with a lone surrogate");
    return new TextEncoder().encode(content);
  }
  if (content instanceof Uint8Array) return content;
  throw new InvalidEventError(path, "blob content must be a Uint8Array or a string");
}

/** The `sha256:<hex>` reference of some content. */
export function blobRef(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Throws `invalid-event` unless `ref` is a well-formed reference. */
export function assertBlobRef(ref: unknown, path = "$"): asserts ref is string {
  if (!isBlobRef(ref))
    throw new InvalidEventError(path, "a blob reference must be sha256:<64 lowercase hex>");
}

/**
 * Stored blob layout (§8), shared by every store: one header byte, then the body.
 * - `0x00` raw: the body is the content.
 * - `0x01` deflate-raw (node:zlib, synchronous): the body inflates to the content.
 * Content is compressed only when that saves space (short or incompressible content stays
 * raw). The reference is always the sha256 of the UNCOMPRESSED content, so compression is an
 * invisible storage detail: `getBlob` returns the original bytes, and `decodeBlob` checks the
 * hash, so a damaged or altered row is `tamper-detected` instead of wrong content.
 * Blobs written before the header existed are stored raw without one: when the header reading
 * does not hash to the reference, the whole stored value is tried as raw content.
 */
export const BLOB_RAW = 0;
export const BLOB_DEFLATE = 1;
/** Below this size compression never pays for its header and the deflate call. */
const MIN_COMPRESS_BYTES = 96;

/** No preset dictionary: a blob's stream inflates with plain `inflateRawSync`. */
const NO_DICTIONARY = prepareDictionary(new Uint8Array(0));

/**
 * The bytes a store keeps for some content (see `BLOB_RAW` / `BLOB_DEFLATE`). Deflated as SQLite
 * event bodies are (codec/deflate.ts): up to 16 KiB, every chat message but the longest, by the
 * ledger's own encoder, not zlib's sync call, which sets up a stream each time. Measured on 2,000
 * messages of 416 bytes of prose: 21 µs a message against 29-35 µs with zlib, 203 bytes
 * against 202. A recorded call on a growing conversation (memory store, hot loop) went from
 * 116-134 µs to 106-110 µs.
 */
export function encodeBlob(content: Uint8Array): Uint8Array {
  if (content.byteLength >= MIN_COMPRESS_BYTES) {
    const out = deflateRaw(content, NO_DICTIONARY, BLOB_DEFLATE);
    if (out.byteLength < content.byteLength + 1) return out;
  }
  const out = new Uint8Array(content.byteLength + 1);
  out[0] = BLOB_RAW;
  out.set(content, 1);
  return out;
}

/** The original content of a stored blob; checks it hashes to `ref`. */
export function decodeBlob(ref: string, stored: Uint8Array): Uint8Array {
  const header = stored[0];
  let content: Uint8Array | undefined;
  if (header === BLOB_RAW) content = stored.subarray(1);
  else if (header === BLOB_DEFLATE) {
    try {
      content = new Uint8Array(inflateRawSync(stored.subarray(1)));
    } catch {
      content = undefined;
    }
  }
  if (content !== undefined && blobRef(content) === ref) return new Uint8Array(content);
  // A blob stored before the header existed (raw bytes as they came).
  if (blobRef(stored) === ref) return new Uint8Array(stored);
  throw new LedgerError("tamper-detected", `blob ${ref} does not hash to its reference`, {
    details: { ref },
  });
}

/**
 * Node's `Buffer` where Node's types are loaded (the drivers' binary parameter type), else
 * `Uint8Array`, which a Buffer is. Named without `Buffer` itself: the published types of the
 * main entry then check in a project without `@types/node` (a browser bundle, an edge worker).
 */
export type NodeBuffer = typeof globalThis extends {
  Buffer: { isBuffer(value: unknown): value is infer Bytes };
}
  ? Bytes
  : Uint8Array;

/** The same bytes as a Buffer, without a copy (what the drivers bind as binary). */
export function bufferOf(bytes: Uint8Array): NodeBuffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A content-addressed blob ready to store: its reference, content and stored form. */
export interface EncodedBlob {
  ref: string;
  content: Uint8Array;
  stored: Uint8Array;
}

/** Hashes and encodes content for a store's putBlob. */
export function prepareBlob(content: Uint8Array | string, path = "$"): EncodedBlob {
  const bytes = blobBytes(content, path);
  return { ref: blobRef(bytes), content: bytes, stored: encodeBlob(bytes) };
}

/**
 * Hashes and encodes every content of a putBlobs batch (or of an append's `blobs`, at `path`
 * "$.blobs") before anything is written, so a bad item (named `<path>[index]`) or a batch that
 * is not an array leaves the store unchanged.
 */
export function prepareBlobs(contents: unknown, path = "$"): EncodedBlob[] {
  if (!Array.isArray(contents))
    throw new InvalidEventError(path, "blobs must be an array of Uint8Array or string contents");
  const blobs: EncodedBlob[] = [];
  for (let index = 0; index < contents.length; index++)
    blobs.push(prepareBlob(contents[index], `${path}[${index}]`));
  return blobs;
}

/** Throws `invalid-event` unless `refs` is an array of well-formed references (`$[index]`). */
export function assertBlobRefs(refs: unknown): asserts refs is string[] {
  if (!Array.isArray(refs))
    throw new InvalidEventError("$", "getBlobs needs an array of sha256:<hex> references");
  for (let index = 0; index < refs.length; index++) assertBlobRef(refs[index], `$[${index}]`);
}

/**
 * `getBlob` of every store: the reference is checked before the store is asked, and what the
 * store returns is decoded (and so hash-checked) here. `fetch` gives the stored form, or
 * null/undefined when there is none.
 */
export async function readBlob(
  ref: string,
  fetch: (ref: string) => Promise<Uint8Array | null | undefined>,
): Promise<Uint8Array> {
  assertBlobRef(ref);
  const stored = await fetch(ref);
  if (stored === null || stored === undefined)
    throw new NotFoundError(`blob ${ref} not found`, { ref });
  return decodeBlob(ref, stored);
}

/**
 * `getBlobs` of every store: the references are checked before the store is asked, each one is
 * fetched once however often it is named, and none at all for an empty list. `fetch` gives the
 * stored form of the references it found; the result holds them decoded, in `fetch`'s order,
 * and leaves out the missing ones.
 */
export async function readBlobs(
  refs: string[],
  fetch: (unique: string[]) => Promise<ReadonlyMap<string, Uint8Array>>,
): Promise<Map<string, Uint8Array>> {
  assertBlobRefs(refs);
  const unique = [...new Set(refs)];
  const out = new Map<string, Uint8Array>();
  if (unique.length === 0) return out;
  for (const [ref, stored] of await fetch(unique)) out.set(ref, decodeBlob(ref, stored));
  return out;
}

/** How long a blob written (or re-put) by `putBlob` is protected from `deleteSession`. */
export const DEFAULT_BLOB_GRACE_MS = 10 * 60_000;

/** The session a put names (`PutBlobOptions.sessionId`), checked: undefined when none. */
export function putBlobSession(options: unknown): string | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new InvalidEventError("$.options", "putBlob options must be an object");
  const { sessionId } = options as { sessionId?: unknown };
  if (sessionId === undefined) return undefined;
  assertId(sessionId, "$.options.sessionId");
  return sessionId;
}
