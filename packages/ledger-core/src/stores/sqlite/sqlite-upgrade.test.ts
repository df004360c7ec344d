import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkInitWithoutUpgrade,
  checkNewerLedgerRefused,
} from "../../testing/init-without-upgrade.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { loadMigrations } from "../sql/migrations.js";
import {
  checkFirstReleaseRace,
  checkFirstReleaseUpgraded,
  type FirstReleaseLedger,
  firstReleaseLedger,
} from "../sql/testing/first-release.js";
import { SqliteEventStore } from "./sqlite-store.js";
import { databaseAtMigration } from "./testing/older-database.js";

const migrationsModule = new URL(
  "../../../dist/stores/sql/migrations.js",
  import.meta.url,
).toString();
const folder = scratchDirectory("ledger-sqlite-upgrade-", { beforeAll, afterAll });

let count = 0;

/** A new file holding the first release's ledger. */
async function firstReleaseFile(): Promise<{ path: string; ledger: FirstReleaseLedger }> {
  const path = join(folder, `first-release-${++count}.db`);
  const raw = databaseAtMigration(path, 1);
  const ledger = await firstReleaseLedger();
  const insertEvent = raw.prepare(
    `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const event of ledger.events)
    insertEvent.run(
      event.sessionId,
      event.commitCursor,
      event.runId,
      event.seq,
      event.eventId,
      event.type,
      event.recordedAt,
      JSON.stringify(event),
    );
  const insertRun = raw.prepare(
    `INSERT INTO runs (session_id, run_id, run_length, status, last_hash, parent_run_id, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const run of ledger.runs)
    insertRun.run(
      run.sessionId,
      run.runId,
      run.runLength,
      run.status,
      run.lastHash,
      run.parentRunId,
      run.startedAt,
    );
  for (const session of ledger.sessions)
    raw
      .prepare("INSERT INTO sessions VALUES (?, ?, ?, ?)")
      .run(session.sessionId, session.lastCursor, session.createdAt, session.updatedAt);
  raw
    .prepare("INSERT INTO blobs (blob_ref, content) VALUES (?, ?)")
    .run(ledger.blob.ref, ledger.blob.content);
  // As the first release's init() left it.
  raw.pragma("journal_mode = WAL");
  raw.close();
  return { path, ledger };
}

/** What an upgrade would change in the file: its bytes, versions and schema. */
function fileSnapshot(path: string): unknown {
  const bytes = readFileSync(path);
  const raw = new Database(path);
  try {
    return {
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      versions: raw.prepare("SELECT * FROM schema_version ORDER BY version").all(),
      schema: raw.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all(),
    };
  } finally {
    raw.close();
  }
}

describe("SqliteEventStore.init({ upgrade: false }) on a file of an older release", () => {
  const latest = loadMigrations("sqlite").length;

  it("refuses the first release's file, changes nothing in it, and opens it once upgraded", async () => {
    const { path } = await firstReleaseFile();
    await checkInitWithoutUpgrade({
      open: () => new SqliteEventStore({ path }),
      snapshot: async () => fileSnapshot(path),
      found: 1,
      reads: latest,
    });
  });

  it.each(Array.from({ length: latest - 2 }, (_, index) => index + 2))(
    "refuses a file at migration %i the same way",
    async (found) => {
      const path = join(folder, `older-${found}.db`);
      const raw = databaseAtMigration(path, found);
      raw.pragma("journal_mode = WAL");
      raw.close();
      await checkInitWithoutUpgrade({
        open: () => new SqliteEventStore({ path }),
        snapshot: async () => fileSnapshot(path),
        found,
        reads: latest,
      });
    },
  );

  it("refuses a file a newer release upgraded, with every init, and changes nothing in it", async () => {
    const path = join(folder, "newer.db");
    const raw = databaseAtMigration(path, latest);
    raw.prepare("INSERT INTO schema_version VALUES (?, 'future', 'now')").run(latest + 1);
    raw.pragma("journal_mode = WAL");
    raw.close();
    await checkNewerLedgerRefused({
      open: () => new SqliteEventStore({ path }),
      snapshot: async () => fileSnapshot(path),
      found: latest + 1,
      reads: latest,
    });
  });

  it("creates a ledger where there is none, and opens a current one", async () => {
    const path = join(folder, "new.db");
    const created = new SqliteEventStore({ path });
    await created.init({ upgrade: false });
    await created.close();
    expect(fileSnapshot(path)).toMatchObject({
      versions: loadMigrations("sqlite").map((migration) => ({ version: migration.version })),
    });
    const reader = new SqliteEventStore({ path });
    await reader.init({ create: false, upgrade: false });
    expect((await reader.listSessions()).sessions).toEqual([]);
    await reader.close();
  });
});

describe("SqliteEventStore on a database of the first release", () => {
  it("reads, verifies, resumes and appends its runs, and keeps the blobs its events name", async () => {
    const { path, ledger } = await firstReleaseFile();
    const store = new SqliteEventStore({ path });
    await store.init();
    await checkFirstReleaseUpgraded(store, ledger);
    await store.close();
  });

  it("8 processes start on it at once: one migrates, none fails", async () => {
    const { path, ledger } = await firstReleaseFile();
    await checkFirstReleaseRace({ kind: "sqlite", location: path }, ledger);
    const raw = new Database(path, { readonly: true });
    expect(
      raw.prepare("SELECT version FROM schema_version ORDER BY version").pluck().all(),
    ).toEqual(loadMigrations("sqlite").map((migration) => migration.version));
    raw.close();
  });

  it("processes starting during a migration longer than the busy timeout wait for it", async () => {
    const { path, ledger } = await firstReleaseFile();
    // A real migrator, slowed down: it applies the shipped migrations in one BEGIN IMMEDIATE
    // transaction and commits 12 s later, as the migration of a large file would.
    const migrator = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import Database from "better-sqlite3";
import { loadMigrations } from ${JSON.stringify(migrationsModule)};
const database = new Database(${JSON.stringify(path)});
database.pragma("journal_mode = WAL");
database.exec("BEGIN IMMEDIATE");
for (const migration of loadMigrations("sqlite").slice(1)) {
  for (const statement of migration.statements) database.exec(statement);
  database.prepare("INSERT INTO schema_version VALUES (?, ?, 'now')").run(migration.version, migration.tag);
}
process.stdout.write("migrating\\n");
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 12000);
database.exec("COMMIT");
database.close();`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    migrator.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const finished = new Promise<number | null>((resolve) => migrator.on("close", resolve));
    await new Promise<void>((resolve, reject) => {
      migrator.stdout.on("data", (chunk) => {
        if (String(chunk).includes("migrating")) resolve();
      });
      migrator.on("close", () => reject(new Error(`the migrator exited early: ${stderr}`)));
    });
    await checkFirstReleaseRace({ kind: "sqlite", location: path }, ledger);
    expect(await finished, stderr).toBe(0);
  }, 60_000);
});
