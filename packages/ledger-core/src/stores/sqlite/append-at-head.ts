import type { HeadAppend } from "../sql/head-cache.js";
import type { SqliteBackendState } from "./backend-state.js";
import { encodeBody } from "./body-codec.js";
import { lastCursor, lockedHead, moveHead } from "./locked-heads.js";
import { storeBlobs } from "./put-blobs.js";
import { refDigest } from "./ref-digest.js";
import { keepingHeads } from "./transaction.js";
import { type Statements, writeStatements } from "./write-statements.js";

/** `SqliteBackend.appendAtHead` (its comment says what the transaction does, and why). */
export async function appendAtHead(
  state: SqliteBackendState,
  append: HeadAppend,
): Promise<number | undefined> {
  if (state.atHead === undefined) {
    const statements = writeStatements(state);
    state.atHead = state.database.transaction((next: HeadAppend) =>
      writeAtHead(state, next, statements),
    ).immediate;
  }
  const atHead = state.atHead;
  return keepingHeads(state, () => atHead(append));
}

function writeAtHead(
  state: SqliteBackendState,
  append: HeadAppend,
  statements: Statements,
): number | undefined {
  const { sessionId, runId, expected } = append;
  const heads = state.heads;
  heads.begin(statements.dataVersion.get() as number);
  const head = lockedHead(state, sessionId, runId);
  if (
    head === undefined ||
    head.status !== "running" ||
    head.runLength !== expected.length ||
    head.lastHash !== expected.lastHash
  )
    return undefined;
  // The run exists, so its session does.
  let cursor = lastCursor(state, sessionId, statements);
  for (const event of append.events) {
    cursor++;
    statements.insertEvent.run(
      sessionId,
      cursor,
      runId,
      event.seq,
      event.eventId,
      event.eventType,
      event.recordedAt,
      encodeBody(`${event.bodyPrefix}${cursor}}`),
    );
  }
  storeBlobs(state, append.blobs);
  for (const ref of append.refs) statements.indexRef.run(refDigest(ref), sessionId);
  heads.rememberCursor(sessionId, cursor);
  moveHead(state, sessionId, runId, append, statements);
  return cursor;
}
