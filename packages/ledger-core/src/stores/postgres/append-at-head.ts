import { bufferOf } from "../../store/blob.js";
import type { HeadAppend } from "../sql/head-cache.js";
import { BLOB_BYTES_PER_STATEMENT } from "../sql/shared-queries.js";
import { appendQueries } from "./append-queries.js";
import { autocommit } from "./autocommit.js";
import type { PostgresBackendState } from "./backend-state.js";

/** `PostgresBackend.appendAtHead`: the statement its comment describes, with its values. */
export async function appendAtHead(
  state: PostgresBackendState,
  append: HeadAppend,
): Promise<number | undefined> {
  const events = append.events;
  const single = events.length === 1 ? events[0] : undefined;
  // One event (every recorded call): scalar parameters, no arrays to serialise (the driver
  // escapes every element of a text array, and the body is JSON full of quotes) or unnest.
  const head = [
    append.sessionId,
    append.runId,
    append.length,
    append.status,
    append.lastHash,
    append.expected.length,
    append.expected.lastHash,
    append.now,
  ];
  const values: unknown[] =
    single !== undefined
      ? [
          ...head,
          single.seq,
          single.eventId,
          single.eventType,
          single.recordedAt,
          single.bodyPrefix,
        ]
      : [
          ...head,
          events.length,
          events.map((event) => event.seq),
          events.map((event) => event.eventId),
          events.map((event) => event.eventType),
          events.map((event) => event.recordedAt),
          events.map((event) => event.bodyPrefix),
        ];
  const queries = appendQueries(state);
  const shape = single !== undefined ? queries.single : queries.batch;
  let query = shape.plain;
  if (append.refs.length > 0) {
    values.push(append.refs);
    query = shape.refs;
  }
  if (append.blobs.length > 0) {
    // Past one statement's bytes the transactional program stores them in chunks.
    let bytes = 0;
    for (const blob of append.blobs) bytes += blob.stored.byteLength;
    if (bytes > BLOB_BYTES_PER_STATEMENT) return undefined;
    values.push(
      append.blobs.map((blob) => blob.ref),
      append.blobs.map((blob) => bufferOf(blob.stored)),
    );
    query = shape.blobs;
  }
  const result = await autocommit<{ last_cursor: string | number }>(state, query, values);
  const row = result.rows[0];
  return row === undefined ? undefined : Number(row.last_cursor);
}
