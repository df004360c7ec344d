import type Database from "better-sqlite3";
import { runKey, setBounded } from "../../store/bounded-map.js";
import type { HeadRow } from "../sql/rows.js";

/** Runs and sessions whose head a connection remembers; the first remembered go first. */
const maxEntries = 4096;

/**
 * What one SQLite connection knows of the heads it wrote: each run's length, status and last
 * hash, and each session's last commit cursor. The SQLite store keeps no counter rows (see
 * schema.ts), so without this every append would look both up in the events indexes.
 *
 * Valid only while no other connection has written: `PRAGMA data_version`, read inside the
 * `BEGIN IMMEDIATE` transaction (which holds the write lock and sees the latest commit), changes
 * exactly when another connection committed. Then everything is forgotten and read again.
 * Writes of this connection keep the number unchanged, which is why the heads are kept per
 * connection (two stores opened on one `Database` share them), and why a failed transaction
 * forgets everything: it may have remembered rows that were rolled back.
 */
export class ConnectionHeads {
  readonly #heads = new Map<string, HeadRow>();
  readonly #cursors = new Map<string, number>();
  /** `data_version` at this connection's last commit; undefined: nothing known. */
  #version: number | undefined;
  #pending: number | undefined;

  /** Inside a write transaction, before any step: drops what another connection made stale. */
  begin(version: number): void {
    if (version !== this.#version) this.forgetAll();
    this.#pending = version;
  }

  /** The transaction committed: what it remembered holds until another connection writes. */
  committed(): void {
    this.#version = this.#pending;
  }

  forgetAll(): void {
    this.#heads.clear();
    this.#cursors.clear();
    this.#version = undefined;
  }

  head(sessionId: string, runId: string): HeadRow | undefined {
    return this.#heads.get(runKey(sessionId, runId));
  }

  rememberHead(sessionId: string, runId: string, head: HeadRow): void {
    setBounded(this.#heads, runKey(sessionId, runId), head, maxEntries);
  }

  cursor(sessionId: string): number | undefined {
    return this.#cursors.get(sessionId);
  }

  rememberCursor(sessionId: string, cursor: number): void {
    setBounded(this.#cursors, sessionId, cursor, maxEntries);
  }
}

const byConnection = new WeakMap<Database.Database, ConnectionHeads>();

/** The heads of one connection, shared by every store opened on it. */
export function connectionHeads(database: Database.Database): ConnectionHeads {
  let heads = byConnection.get(database);
  if (heads === undefined) {
    heads = new ConnectionHeads();
    byConnection.set(database, heads);
  }
  return heads;
}
