import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * A virtual column whose every row costs SQLite's check of the file a few milliseconds: the
 * check tests its NOT NULL, computing a megabyte of text for it. The rows hold nothing but `x`.
 */
const SLOW_TABLE = `CREATE TABLE slow_check (x INTEGER, y TEXT GENERATED ALWAYS AS (replace(printf('%.*c', 1000000 + 0 * x, 'a'), 'a', 'bb')) VIRTUAL NOT NULL)`;

/**
 * Adds `rows` rows to the SQLite file at `path` that make `PRAGMA quick_check` on it slow: about
 * 3.5 ms each on a CI machine's core (2,000: 7 s), as a check of gigabytes of ledger is, without
 * writing gigabytes. The rows are written while the column costs nothing, then the schema is
 * given the slow one (virtual: nothing stored changes), so making the file takes milliseconds.
 * No other connection may have the file open.
 */
export async function makeSlowToCheck(path: string, rows: number): Promise<void> {
  const { default: Database } = await import("better-sqlite3");
  const database = new Database(path);
  try {
    database.exec(
      "CREATE TABLE slow_check (x INTEGER, y TEXT GENERATED ALWAYS AS (x) VIRTUAL NOT NULL)",
    );
    database
      .prepare(
        "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < ?) INSERT INTO slow_check (x) SELECT x FROM i",
      )
      .run(rows - 1);
    // Editing sqlite_schema needs the driver's defensive mode off.
    database.unsafeMode(true);
    database.pragma("writable_schema = ON");
    database.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'slow_check'").run(SLOW_TABLE);
    database.pragma("writable_schema = OFF");
  } finally {
    database.close();
  }
}

/**
 * The ids of the processes that run SQLite's check of the file at `path` for `fileProblems`
 * (file-check-process.js, given the path). From /proc where there is one, else from `ps`.
 */
export function fileCheckProcesses(path: string): number[] {
  const lines = existsSync("/proc")
    ? readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .map((pid) => `${pid} ${commandLine(pid)}`)
    : execFileSync("ps", ["-A", "-o", "pid=,args="], { encoding: "utf8" }).split("\n");
  return lines
    .map((line) => line.trim())
    .filter((line) => line.includes("file-check-process.js") && line.includes(path))
    .map((line) => Number.parseInt(line, 10));
}

/** A process's arguments, joined by spaces ("" once it has gone). */
function commandLine(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}
