import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import Database from "better-sqlite3";

/** Where `@agent-ledger/core` keeps the migrations it ships, per dialect. */
const drizzle = join(
  dirname(createRequire(import.meta.url).resolve("@agent-ledger/core/package.json")),
  "drizzle",
);

/** The shipped migrations of a dialect, in order: what each release's init() applied. */
export function shippedMigrations(
  dialect: "sqlite" | "postgres" | "mysql",
): { version: number; tag: string; statements: string[] }[] {
  const journal = JSON.parse(
    readFileSync(join(drizzle, dialect, "meta", "_journal.json"), "utf8"),
  ) as { entries: { idx: number; tag: string }[] };
  return [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .map((entry) => ({
      version: entry.idx + 1,
      tag: entry.tag,
      statements: readFileSync(join(drizzle, dialect, `${entry.tag}.sql`), "utf8")
        .split("--> statement-breakpoint")
        .map((statement) => statement.trim())
        .filter((statement) => statement.length > 0),
    }));
}

/**
 * A SQLite file as the first release left it (migration 1, WAL), holding session `sessionId`:
 * a run with a tool call in flight, in that release's rows (event bodies as JSON text).
 */
export async function firstReleaseSqlite(path: string, sessionId: string): Promise<void> {
  const memory = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store: memory,
    sessionId,
    runId: "r",
    actor: { type: "agent", id: "old-agent" },
  });
  await recorder.startRun();
  await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
  const events = (await memory.readSession({ sessionId })).events;
  const database = new Database(path);
  try {
    database.pragma("journal_mode = WAL");
    const [first] = shippedMigrations("sqlite");
    for (const statement of first?.statements ?? []) database.exec(statement);
    database
      .prepare("INSERT INTO schema_version VALUES (?, ?, 'then')")
      .run(first?.version, first?.tag);
    const insert = database.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (const event of events)
      insert.run(
        sessionId,
        event.commitCursor,
        event.runId,
        event.seq,
        event.eventId,
        event.type,
        event.recordedAt,
        JSON.stringify(event),
      );
    const last = events[events.length - 1];
    database
      .prepare("INSERT INTO runs VALUES (?, 'r', ?, 'running', ?, NULL, ?)")
      .run(sessionId, events.length, last?.hash, events[0]?.recordedAt);
    database
      .prepare("INSERT INTO sessions VALUES (?, ?, ?, ?)")
      .run(sessionId, last?.commitCursor, events[0]?.recordedAt, last?.recordedAt);
  } finally {
    database.close();
  }
}
