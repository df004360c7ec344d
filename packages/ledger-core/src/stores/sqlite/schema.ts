// Drizzle schema of the SQLite store. drizzle-kit reads this file to generate the shipped
// migrations (drizzle/sqlite); keep it free of imports outside drizzle-orm.
import {
  blob,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

/**
 * One row per event; `body` is the whole event JSON exactly as returned to readers: TEXT, or
 * (a long body) a BLOB holding it compressed (body-codec.ts; the column's TEXT affinity keeps a
 * BLOB as is).
 */
export const events = sqliteTable(
  "events",
  {
    sessionId: text("session_id").notNull(),
    commitCursor: integer("commit_cursor").notNull(),
    runId: text("run_id").notNull(),
    seq: integer("seq").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    recordedAt: text("recorded_at").notNull(),
    body: text("body").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.sessionId, table.commitCursor] }),
    uniqueIndex("events_run_seq").on(table.sessionId, table.runId, table.seq),
    uniqueIndex("events_event_id").on(table.sessionId, table.eventId),
  ],
);

/**
 * One row per run, written when the run starts and when it closes, not on every append: while
 * the run is open its length and last hash are those of its last event (the `events_run_seq`
 * index finds it), so an append writes only its event rows, which is what keeps a durable
 * `beforeModelCall` close to a bare insert. Closing writes the final head into the row, where it
 * witnesses the run's tail: `verifyRun` reports a closed run whose last events were deleted.
 */
export const runs = sqliteTable(
  "runs",
  {
    sessionId: text("session_id").notNull(),
    runId: text("run_id").notNull(),
    status: text("status").notNull(),
    closedLength: integer("closed_length"),
    closedHash: text("closed_hash"),
    parentRunId: text("parent_run_id"),
    startedAt: text("started_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.sessionId, table.runId] }),
    index("runs_parent").on(table.sessionId, table.parentRunId),
  ],
);

/**
 * One row per session, written by its first append. Appends hold the database's write lock
 * (`BEGIN IMMEDIATE`), so the next commit cursor is the session's largest plus one: gap-free
 * and in commit order without a counter row to update.
 */
export const sessions = sqliteTable("sessions", {
  sessionId: text("session_id").primaryKey(),
  createdAt: text("created_at").notNull(),
});

/**
 * Content-addressed blobs (the 32-byte sha256 digest of `sha256:<hex>` -> stored bytes: a
 * one-byte header, then raw or compressed content, see store/blob.ts). The key is the raw
 * digest, not the 71-character text: half the bytes in the row and in its key index. `touched_at` (epoch ms) is refreshed by every
 * putBlob: retention never collects a blob put within its grace period.
 */
export const blobs = sqliteTable("blobs", {
  digest: blob("digest", { mode: "buffer" }).primaryKey(),
  content: blob("content", { mode: "buffer" }).notNull(),
  touchedAt: integer("touched_at").notNull().default(0),
});

/**
 * Blob reference index: which session names which blob (from evidenceRefs, at append time),
 * keyed by blob (the retention question is "does another session name it?"), and by session
 * (a deleted session's own refs: without it each deletion scanned every session's rows).
 */
export const blobRefs = sqliteTable(
  "blob_refs",
  {
    digest: blob("digest", { mode: "buffer" }).notNull(),
    sessionId: text("session_id").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.digest, table.sessionId] }),
    index("blob_refs_session").on(table.sessionId),
  ],
);

/** Applied migrations, one row per shipped migration. */
export const schemaVersion = sqliteTable("schema_version", {
  version: integer("version").primaryKey(),
  tag: text("tag").notNull(),
  appliedAt: text("applied_at").notNull(),
});
