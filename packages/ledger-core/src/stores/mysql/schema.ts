// Drizzle schema of the MySQL/MariaDB store. drizzle-kit reads this file to generate the shipped
// migrations (drizzle/mysql); keep it free of imports outside drizzle-orm. Ids are VARBINARY:
// ids are opaque and case-sensitive, and the default collations compare case-insensitively
// ('a' = 'A'), which would break the unique keys. 1020 bytes = 255 characters of UTF-8.
import {
  bigint,
  customType,
  index,
  int,
  longtext,
  mysqlSchema,
  mysqlTable,
  primaryKey,
  uniqueIndex,
  varbinary,
  varchar,
} from "drizzle-orm/mysql-core";

const longblob = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => "longblob",
});

const id = (name: string) => varbinary(name, { length: 1020 });

function tables(table: typeof mysqlTable) {
  const events = table(
    "events",
    {
      sessionId: id("session_id").notNull(),
      commitCursor: bigint("commit_cursor", { mode: "number", unsigned: true }).notNull(),
      runId: id("run_id").notNull(),
      seq: int("seq", { unsigned: true }).notNull(),
      eventId: id("event_id").notNull(),
      eventType: varchar("event_type", { length: 255 }).notNull(),
      recordedAt: varchar("recorded_at", { length: 40 }).notNull(),
      body: longtext("body").notNull(),
    },
    (columns) => [
      primaryKey({ columns: [columns.sessionId, columns.commitCursor] }),
      uniqueIndex("events_run_seq").on(columns.sessionId, columns.runId, columns.seq),
      uniqueIndex("events_event_id").on(columns.sessionId, columns.eventId),
    ],
  );
  const runs = table(
    "runs",
    {
      sessionId: id("session_id").notNull(),
      runId: id("run_id").notNull(),
      runLength: int("run_length", { unsigned: true }).notNull(),
      status: varchar("status", { length: 16 }).notNull(),
      lastHash: varchar("last_hash", { length: 80 }),
      parentRunId: id("parent_run_id"),
      startedAt: varchar("started_at", { length: 40 }).notNull(),
    },
    (columns) => [
      primaryKey({ columns: [columns.sessionId, columns.runId] }),
      index("runs_parent").on(columns.sessionId, columns.parentRunId),
    ],
  );
  const sessions = table("sessions", {
    sessionId: id("session_id").primaryKey(),
    lastCursor: bigint("last_cursor", { mode: "number", unsigned: true }).notNull(),
    createdAt: varchar("created_at", { length: 40 }).notNull(),
    updatedAt: varchar("updated_at", { length: 40 }).notNull(),
  });
  // Stored bytes: a one-byte header, then raw or deflate-raw content (store/blob.ts);
  // touched_at (epoch ms) is refreshed by every putBlob (retention grace period).
  const blobs = table("blobs", {
    blobRef: varchar("blob_ref", { length: 80 }).primaryKey(),
    content: longblob("content").notNull(),
    touchedAt: bigint("touched_at", { mode: "number" }).notNull().default(0),
  });
  /**
   * Blob reference index: which session names which blob (evidenceRefs, at append), by blob,
   * and by session (a deleted session's own refs: without it each deletion scanned them all).
   */
  const blobRefs = table(
    "blob_refs",
    {
      blobRef: varchar("blob_ref", { length: 80 }).notNull(),
      sessionId: id("session_id").notNull(),
    },
    (columns) => [
      primaryKey({ columns: [columns.blobRef, columns.sessionId] }),
      index("blob_refs_session").on(columns.sessionId),
    ],
  );
  const schemaVersion = table("schema_version", {
    version: int("version").primaryKey(),
    tag: varchar("tag", { length: 255 }).notNull(),
    appliedAt: varchar("applied_at", { length: 40 }).notNull(),
  });
  return { events, runs, sessions, blobs, blobRefs, schemaVersion };
}

/** The tables, optionally qualified by a database name, for stores isolated by database. */
export function mysqlTables(database?: string) {
  if (database === undefined) return tables(mysqlTable);
  return tables(mysqlSchema(database).table as unknown as typeof mysqlTable);
}

const defaults = mysqlTables();
export const events = defaults.events;
export const runs = defaults.runs;
export const sessions = defaults.sessions;
export const blobs = defaults.blobs;
export const blobRefs = defaults.blobRefs;
export const schemaVersion = defaults.schemaVersion;
