import { InvalidArgumentError, InvalidEventError } from "../../events/errors.js";
import type { EventRow } from "../sql/rows.js";
import { BODY_CHARS_PER_STATEMENT, blobValues } from "../sql/shared-queries.js";
import type { BlobRow } from "../sql/sql-backend.js";

/** Room for the statement around the values, within max_allowed_packet. */
const packetOverhead = 64 * 1024;

/**
 * Body characters one statement may carry within `maxPacket` bytes: a character is at most 3
 * bytes of UTF-8 (a surrogate pair, 4 bytes, is 2 characters), escaped into the statement's
 * text at most twice over.
 */
export function bodyCharsPerStatement(maxPacket: number): number {
  return Math.max(
    1,
    Math.min(BODY_CHARS_PER_STATEMENT, Math.floor((maxPacket - packetOverhead) / 6)),
  );
}

/**
 * Bytes of an event body in a statement: its UTF-8, each character mysql2 escapes counted
 * twice (a JSON text holds no raw control character: only quotes and backslashes).
 */
function escapedBytes(body: string): number {
  let escaped = 0;
  for (let index = 0; index < body.length; index++) {
    const code = body.charCodeAt(index);
    if (code === 0x22 || code === 0x27 || code === 0x5c) escaped++;
  }
  return Buffer.byteLength(body) + escaped;
}

/**
 * Refuses, before anything is written, an event no statement can carry on this server: its row
 * alone is longer than max_allowed_packet, which the server answers by dropping the connection
 * ("Got a packet bigger than 'max_allowed_packet' bytes"), a refusal no retry gets past.
 */
export function assertRowsFit(rows: EventRow[], maxPacket: number): void {
  rows.forEach((row, index) => {
    if (row.body.length * 6 + packetOverhead <= maxPacket) return;
    const bytes = escapedBytes(row.body);
    if (bytes + packetOverhead <= maxPacket) return;
    throw new InvalidEventError(
      `$.events[${index}]`,
      `the event is ${bytes} bytes as stored, more than this server's max_allowed_packet (${maxPacket} bytes) leaves for one statement: keep large content in the blob store (putBlob, or the recorder's compaction) or raise max_allowed_packet`,
    );
  });
}

/**
 * The blobs' upsert VALUES, in chunks one statement carries within `maxPacket`; a blob too
 * large for any is refused (`invalid-argument` at its path) before anything is written.
 */
export function blobChunks(rows: BlobRow[], maxPacket: number): ReturnType<typeof blobValues> {
  // A blob travels in the statement's text as X'<hex>': twice its stored bytes.
  const budget = Math.max(1, Math.floor((maxPacket - packetOverhead) / 2));
  for (const row of rows) {
    if (row.stored.byteLength <= budget) continue;
    throw new InvalidArgumentError(
      row.path,
      `the blob is ${row.stored.byteLength} bytes as stored (compressed), more than this server's max_allowed_packet (${maxPacket} bytes) carries in one statement (as hex, twice its size): raise max_allowed_packet`,
    );
  }
  return blobValues(rows, budget);
}
