import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import Database from "better-sqlite3";
import { BIN } from "./session-fixture.test.data.js";

/** A command started by `startToFile`. */
export interface StartedToFile {
  child: ChildProcess;
  /** Its exit code once it has exited. */
  exited: Promise<number | null>;
  /** What it has written to stdout (the file) so far. */
  output(): string;
  errors(): string;
}

/**
 * Starts `node dist/bin.js ...args` with stdout redirected to `stdoutFile`, as `agent-ledger
 * verify s > out.txt` does: Node then writes stdout synchronously, so a command's writes give
 * the event loop no turn, and a Ctrl-C is seen only where the command takes one. Resolves once
 * `ready` holds (stdout matches it, or the function answers true), polled every few ms.
 */
export async function startToFile(
  args: string[],
  stdoutFile: string,
  ready: RegExp | (() => Promise<boolean>),
): Promise<StartedToFile> {
  const fd = openSync(stdoutFile, "w");
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ["ignore", fd, "pipe"],
    env: { ...process.env, AGENT_LEDGER_STORE: "" },
  });
  closeSync(fd);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exit: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      exit = code;
      resolve(code);
    }),
  );
  const output = () => readFileSync(stdoutFile, "utf8");
  const isReady = typeof ready === "function" ? ready : async () => ready.test(output());
  for (const start = Date.now(); !(await isReady()); await sleep(2)) {
    if (exit !== undefined)
      throw new Error(`exited with ${exit} before ready: ${output().slice(-500)}${stderr}`);
    if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${ready}: ${stderr}`);
  }
  return { child, exited, output, errors: () => stderr };
}

/**
 * A SQLite ledger to fill quickly: the store on a connection without an fsync per append (a
 * test's scratch file needs no durability).
 */
export async function fastLedger(
  path: string,
): Promise<{ store: SqliteEventStore; close(): Promise<void> }> {
  const database = new Database(path);
  const store = new SqliteEventStore({ database });
  await store.init();
  database.pragma("synchronous = OFF");
  return {
    store,
    async close() {
      await store.close();
      database.close();
    },
  };
}
