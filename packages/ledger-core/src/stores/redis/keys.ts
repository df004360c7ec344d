import { createHash } from "node:crypto";

/**
 * sha256 of an id's UTF-16 code units. Hashing the UTF-8 form would not do: it turns a lone
 * surrogate into U+FFFD, so "a\uD800" and "a\uFFFD" (distinct, valid ids) would share keys.
 */
function idHash(id: string): string {
  return createHash("sha256").update(Buffer.from(id, "utf16le")).digest("hex");
}

/**
 * An id as a value or hash field inside Redis: its JSON string, which escapes lone surrogates,
 * so no two ids share a field (ioredis sends strings as UTF-8, which would merge them).
 */
export function idField(id: string): string {
  return JSON.stringify(id);
}

export function idFromField(field: string): string {
  return JSON.parse(field) as string;
}

/**
 * Key names of one session. Ids never appear raw in a key: the session is hashed into a hash
 * tag (`{...}`) so every key of a session lands in one Redis Cluster slot (one Lua script may
 * touch them all), and a run id is hashed too. A hash has no `{`, `}` or `:`, so hostile ids
 * cannot break out of the tag or collide with another id's keys.
 */
export interface SessionKeys {
  /** Hash: sessionId (as idField), cursor (the commit-cursor counter), createdAt, updatedAt, listed. */
  meta: string;
  /** List of event JSON (without commitCursor) in commit order: index i is cursor i + 1. */
  log: string;
  /** Hash: idField(eventId) -> commit cursor of the stored event. */
  ids: string;
  /** List of run hashes in creation order, for listRuns. */
  runs: string;
  /**
   * Set of the blob refs put for the session (`putBlob`'s `sessionId`), which its events may
   * not name: deleteSession collects them with the ones its events name.
   */
  puts: string;
}

export interface RunKeys {
  /** Hash of the run id, as used in the run's key names and in the session's `runs` list. */
  runHash: string;
  /** List of commit cursors by seq. */
  events: string;
  /** Hash: runId and parentRunId (as idField), length, status, lastHash, startedAt. */
  head: string;
}

/** The hash tag of a session: every key of the session contains it. */
export function sessionTag(sessionId: string): string {
  return `{${idHash(sessionId)}}`;
}

export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  const base = `${prefix}s:${sessionTag(sessionId)}`;
  return {
    meta: `${base}:meta`,
    log: `${base}:log`,
    ids: `${base}:ids`,
    runs: `${base}:runs`,
    puts: `${base}:puts`,
  };
}

export function runHashOf(runId: string): string {
  return idHash(runId);
}

export function runKeysByHash(prefix: string, sessionId: string, runHash: string): RunKeys {
  const base = `${prefix}s:${sessionTag(sessionId)}:run:${runHash}`;
  return { runHash, events: `${base}:events`, head: `${base}:head` };
}

export function runKeys(prefix: string, sessionId: string, runId: string): RunKeys {
  return runKeysByHash(prefix, sessionId, runHashOf(runId));
}

/**
 * Sorted set (all scores 0, ordered by member bytes) of every session id, for listSessions.
 * It lives outside any session's slot, so the append script cannot write it (see the store).
 * Layout 2 kept the index under `sessions`, its members in UTF-16 (layout-migration.ts).
 */
export function sessionsKey(prefix: string): string {
  return `${prefix}session-ids`;
}

/**
 * Keys of one blob, by the hex of its sha256. All three carry the hex as their hash tag, so
 * they share one Redis Cluster slot: putBlob writes the content, the time and the claim of its
 * session in one script, and retention checks and deletes them in one script.
 */
export interface BlobKeys {
  /** The stored (encoded) content. */
  content: string;
  /** Set of the sessions (as idField) whose events reference the blob: the reference index. */
  sessions: string;
  /** Epoch ms the blob was last put (the retention grace period starts there). */
  touched: string;
}

export function blobKeys(prefix: string, hex: string): BlobKeys {
  const base = `${prefix}blob:{${hex}}`;
  return { content: base, sessions: `${base}:sessions`, touched: `${base}:touched` };
}

/** A blob's keys as every blob script takes them (KEYS 1 session set, 2 content, 3 time). */
export function blobScriptKeys(prefix: string, hex: string): string[] {
  const keys = blobKeys(prefix, hex);
  return [keys.sessions, keys.content, keys.touched];
}

/** Format version of the key layout, checked by init(). */
export function schemaKey(prefix: string): string {
  return `${prefix}schema-version`;
}

/**
 * A session id as a member of the `session-ids` sorted set: its UTF-8 bytes. ZRANGEBYLEX
 * compares members byte by byte, so the set sorts by code point, as every store lists
 * sessions (`compareIds`). Ids have no lone surrogates, so the encoding is reversible.
 */
export function sessionMember(sessionId: string): Buffer {
  return Buffer.from(sessionId, "utf8");
}

export function sessionFromMember(member: Buffer): string {
  return member.toString("utf8");
}
