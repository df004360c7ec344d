// Drizzle schema of the PostgreSQL store. drizzle-kit reads this file to generate the shipped
// migrations (drizzle/postgres); keep it free of imports outside drizzle-orm. JSON is stored as
// TEXT, never jsonb: jsonb rejects \u0000 and reorders keys, and events must read back verbatim.
import { sql } from "drizzle-orm";
import {
  bigint,
  customType,
  index,
  integer,
  PgSchema,
  pgSchema,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const bytes = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => "bytea",
});

function tables(table: typeof pgTable) {
  const events = table(
    "events",
    {
      sessionId: text("session_id").notNull(),
      commitCursor: bigint("commit_cursor", { mode: "number" }).notNull(),
      runId: text("run_id").notNull(),
      seq: integer("seq").notNull(),
      eventId: text("event_id").notNull(),
      eventType: text("event_type").notNull(),
      recordedAt: text("recorded_at").notNull(),
      body: text("body").notNull(),
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
      sessionId: text("session_id").notNull(),
      runId: text("run_id").notNull(),
      runLength: integer("run_length").notNull(),
      status: text("status").notNull(),
      lastHash: text("last_hash"),
      parentRunId: text("parent_run_id"),
      startedAt: text("started_at").notNull(),
    },
    (columns) => [
      primaryKey({ columns: [columns.sessionId, columns.runId] }),
      index("runs_parent").on(columns.sessionId, columns.parentRunId),
    ],
  );
  const sessions = table(
    "sessions",
    {
      sessionId: text("session_id").primaryKey(),
      lastCursor: bigint("last_cursor", { mode: "number" }).notNull(),
      createdAt: text("created_at").notNull(),
      updatedAt: text("updated_at").notNull(),
    },
    // listSessions pages in code-point order (`collate "C"`), which the primary key's index,
    // in the database's collation, does not serve: without this one every page sorted the
    // whole table. Migration 0006 says how it is built on an existing ledger.
    (columns) => [index("sessions_code_point").on(sql`${columns.sessionId} collate "C"`)],
  );
  // Stored bytes: a one-byte header, then raw or deflate-raw content (store/blob.ts);
  // touched_at (epoch ms) is refreshed by every putBlob (retention grace period).
  const blobs = table("blobs", {
    blobRef: text("blob_ref").primaryKey(),
    content: bytes("content").notNull(),
    touchedAt: bigint("touched_at", { mode: "number" }).notNull().default(0),
  });
  /**
   * Blob reference index: which session names which blob (evidenceRefs, at append), by blob,
   * and by session (a deleted session's own refs: without it each deletion scanned them all).
   */
  const blobRefs = table(
    "blob_refs",
    {
      blobRef: text("blob_ref").notNull(),
      sessionId: text("session_id").notNull(),
    },
    (columns) => [
      primaryKey({ columns: [columns.blobRef, columns.sessionId] }),
      index("blob_refs_session").on(columns.sessionId),
    ],
  );
  const schemaVersion = table("schema_version", {
    version: integer("version").primaryKey(),
    tag: text("tag").notNull(),
    appliedAt: text("applied_at").notNull(),
  });
  return { events, runs, sessions, blobs, blobRefs, schemaVersion };
}

/**
 * The tables inside a PostgreSQL schema, named with it, so that every query finds them whatever
 * the connection's search_path (an application's pool may put its own schema, with its own
 * `events` or `sessions` table, first). Unqualified only when `schema` is omitted: the shipped
 * migrations are generated from those, and run with the store's schema as the search_path.
 */
export function postgresTables(schema?: string) {
  if (schema === undefined) return tables(pgTable);
  // drizzle's pgSchema() refuses "public" (it expects pgTable for it), the class does not.
  const named = schema === "public" ? new PgSchema(schema) : pgSchema(schema);
  return tables(named.table as unknown as typeof pgTable);
}

const defaults = postgresTables();
export const events = defaults.events;
export const runs = defaults.runs;
export const sessions = defaults.sessions;
export const blobs = defaults.blobs;
export const blobRefs = defaults.blobRefs;
export const schemaVersion = defaults.schemaVersion;
