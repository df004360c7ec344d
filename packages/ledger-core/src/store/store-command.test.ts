import pg from "pg";
import { describe, expect, test } from "vitest";
import { PostgresEventStore } from "../stores/postgres/postgres-store.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { MemoryEventStore } from "./memory-store.js";
import { ledgerCommand } from "./store-command.js";

// A command pasted into a shell with a SQLite file's path and an id that need quoting is tested
// end to end by the OpenAI Agents adapter (its messages print them): store-command.test.ts there.

const GENERIC = "(with --store <your store's URL> unless $AGENT_LEDGER_STORE names it)";

describe("ledgerCommand: the agent-ledger command an adapter's message prints names the store", () => {
  test("a store opened from a URL with a password: the URL with *** in its place, and the person told to put it back", async () => {
    const store = new PostgresEventStore({
      connectionString: "postgres://app:s3cret@db.example:5432/ledger?schema=agents",
    });
    try {
      expect(ledgerCommand(store, "inspect", ["s"])).toBe(
        "`agent-ledger inspect --store 'postgres://app:***@db.example:5432/ledger?schema=agents' -- s` (with the store's password in place of ***)",
      );
    } finally {
      await store.close();
    }
  });

  test("a store on the application's own pool, or in memory, names no URL: the person is told to give theirs", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://app@db.example/ledger" });
    const pooled = new PostgresEventStore({ pool });
    expect(ledgerCommand(pooled, "inspect", ["s"])).toBe(
      `\`agent-ledger inspect -- s\` ${GENERIC}`,
    );
    await pooled.close();
    await pool.end();
    expect(ledgerCommand(new MemoryEventStore(), "resolve --abandon x", ["s", "a"])).toBe(
      `\`agent-ledger resolve --abandon x -- s a\` ${GENERIC}`,
    );
    const inMemory = new SqliteEventStore({ path: ":memory:" });
    expect(ledgerCommand(inMemory, "inspect", ["s"])).toBe(
      `\`agent-ledger inspect -- s\` ${GENERIC}`,
    );
    await inMemory.close();
  });

  test("a caller without the store at hand gets the command with the same note", () => {
    expect(ledgerCommand(undefined, "inspect", ["s"])).toBe(
      `\`agent-ledger inspect -- s\` ${GENERIC}`,
    );
  });
});
