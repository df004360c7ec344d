import type Database from "better-sqlite3";

/**
 * What the separate process that checks a SQLite file (file-check-process.ts) answers on its
 * stdout: the problems SQLite's check found, or why the file could not be opened (the driver's
 * error, named as the store's own connection would name it).
 */
export type FileCheckAnswer =
  | { problems: string[] }
  | { openFailure: { name: string; message: string; code?: string } };

/** What `PRAGMA quick_check` reports on `database`, "ok" left out: empty when the file is sound. */
export function quickCheck(database: Database.Database): string[] {
  try {
    const rows = database.pragma("quick_check", { simple: false }) as { quick_check: string }[];
    return rows.map((row) => row.quick_check).filter((line) => line !== "ok");
  } catch (error) {
    // A file too damaged to walk says so by failing.
    return [error instanceof Error ? error.message : String(error)];
  }
}
