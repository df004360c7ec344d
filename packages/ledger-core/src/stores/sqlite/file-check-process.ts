// SQLite's check of a file, run by `fileProblems` (file-check.ts) in a process of its own, which
// is killed to stop it: `PRAGMA quick_check` is one statement, which better-sqlite3 cannot
// interrupt, and a worker thread inside it would hold up its process's exit until it ended.
// Usage: node file-check-process.js <path>; one JSON `FileCheckAnswer` on stdout.
import Database from "better-sqlite3";
import { type FileCheckAnswer, quickCheck } from "./quick-check.js";

// A Ctrl-C in a terminal reaches every process of the foreground group: whether the check
// stops is for the process that started it to say (its `signal`), which kills this one.
process.on("SIGINT", () => undefined);

function answer(path: string): FileCheckAnswer {
  let database: Database.Database;
  try {
    // Read-only: the check never writes, and neither does closing this connection.
    database = new Database(path, { readonly: true, fileMustExist: true });
    database.pragma("busy_timeout = 10000");
  } catch (error) {
    const { name, message, code } = error as Error & { code?: unknown };
    return {
      openFailure: { name, message, ...(typeof code === "string" ? { code } : {}) },
    };
  }
  try {
    return { problems: quickCheck(database) };
  } finally {
    database.close();
  }
}

process.stdout.write(JSON.stringify(answer(process.argv[2] ?? "")));
