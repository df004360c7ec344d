import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { AppendResult, EventStore } from "@agent-ledger/core";
import { decodeBody, encodeBody, SqliteEventStore } from "@agent-ledger/core/sqlite";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { runCli } from "./run-cli.js";
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

/** Appends run `runId` of `sessionId`: started, then completed (2 events), by agent `a`. */
export function appendEndedRun(
  store: EventStore,
  sessionId: string,
  runId = "r",
): Promise<AppendResult> {
  const actor = { type: "agent", id: "a" } as const;
  return store.append({
    sessionId,
    runId,
    expectedSeq: 0,
    events: [
      { type: "run.started", actor, payload: {} },
      { type: "run.completed", actor, payload: { output: null } },
    ],
  });
}

/** The id of the `index`th session of `ledgerOfSessions`: `s-00000`, `s-00001`... */
export const nthSession = (index: number): string => `s-${String(index).padStart(5, "0")}`;

/** A SQLite ledger at `path` of `count` sessions (nthSession), each one ended run of 2 events. */
export async function ledgerOfSessions(path: string, count: number): Promise<void> {
  const { store, close } = await fastLedger(path);
  for (let index = 0; index < count; index += 100)
    await Promise.all(
      Array.from({ length: Math.min(100, count - index) }, (_, offset) =>
        appendEndedRun(store, nthSession(index + offset)),
      ),
    );
  await close();
}

/**
 * Edits by hand the event at `seq` of run `runId` of `sessionId` in the SQLite file at `path`
 * (its empty payload gets a member): verify then finds the run tampered with at that seq.
 */
export function tamperWithEvent(
  path: string,
  event: { sessionId: string; runId: string; seq: number },
): void {
  const database = new Database(path);
  try {
    const where = "WHERE session_id = ? AND run_id = ? AND seq = ?";
    const key = [event.sessionId, event.runId, event.seq];
    const row = database.prepare(`SELECT body FROM events ${where}`).get(...key) as
      | { body: unknown }
      | undefined;
    const json = row === undefined ? "" : decodeBody(row.body);
    if (!json.includes('"payload":{}')) throw new Error(`no event with an empty payload at ${key}`);
    const edited = encodeBody(json.replace('"payload":{}', '"payload":{"by":"hand"}'));
    database.prepare(`UPDATE events SET body = ? ${where}`).run(edited, ...key);
  } finally {
    database.close();
  }
}

/** Text written to it, as a CLI output stream; a write that puts `abortAt` in the text aborts `controller`. */
function capturedOutput(controller?: AbortController, abortAt?: string) {
  const stream = {
    text: "",
    write(chunk: string) {
      stream.text += chunk;
      if (abortAt !== undefined && stream.text.includes(abortAt)) controller?.abort();
      return true;
    },
  };
  return stream;
}

/** Runs the CLI in this process, Ctrl-C never pressed: its exit code and what it printed. */
export async function runCliCaptured(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCaptured(args, new AbortController());
}

/**
 * Runs the CLI in this process with Ctrl-C pressed once `abortAt` is in what it printed on
 * stdout, or before it begins (`abortAt` undefined): its exit code and what it printed.
 */
export async function runCliInterrupted(
  args: string[],
  abortAt?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const controller = new AbortController();
  if (abortAt === undefined) controller.abort();
  return runCaptured(args, controller, abortAt);
}

async function runCaptured(args: string[], controller: AbortController, abortAt?: string) {
  const stdout = capturedOutput(controller, abortAt);
  const stderr = capturedOutput();
  const code = await runCli(args, { stdout, stderr, env: {}, signal: controller.signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * Puts `count` blobs no session references (`orphan 0`, `orphan 1`...), a thousand a call, and
 * answers their refs sorted: the order of their digests, which a sweep of the blobs follows.
 */
export async function putOrphanBlobs(store: SqliteEventStore, count: number): Promise<string[]> {
  const refs: string[] = [];
  for (let index = 0; index < count; index += 1000)
    refs.push(
      ...(await store.putBlobs(
        Array.from({ length: 1000 }, (_, offset) => `orphan ${index + offset}`),
      )),
    );
  return refs.sort();
}

/** Which of `refs` `store` holds, in their order (read beside a command, as a second process would). */
export async function heldBlobs(store: SqliteEventStore, refs: string[]): Promise<string[]> {
  const found = new Set<string>();
  for (let index = 0; index < refs.length; index += 1000)
    for (const ref of (await store.getBlobs(refs.slice(index, index + 1000))).keys())
      found.add(ref);
  return refs.filter((ref) => found.has(ref));
}

/**
 * Starts `args`, a command that sweeps the orphan blobs `refs` of the SQLite ledger at `ledger`
 * (sorted: the sweep's order), and presses Ctrl-C once its first page is gone. The command exits
 * 130 and says on stderr how many blobs it deleted (`said`, the count its first group): more than
 * none and fewer than all, and exactly those (the first refs) are gone. Answers its stdout.
 */
export async function interruptBlobSweep(
  ledger: string,
  args: string[],
  stdoutFile: string,
  refs: string[],
  said: RegExp,
): Promise<string> {
  const reader = new SqliteEventStore({ path: ledger });
  await reader.init({ create: false, upgrade: false });
  try {
    const { child, exited, output, errors } = await startToFile(
      args,
      stdoutFile,
      // Running: its first page (the first refs by digest) is gone.
      async () => (await heldBlobs(reader, refs.slice(0, 1))).length === 0,
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const saying = said.exec(errors());
    expect(saying, errors()).not.toBeNull();
    const deleted = Number(saying?.[1]);
    // The store holds exactly what it did not say it deleted: the refs after the pages done.
    expect(deleted).toBeGreaterThan(0);
    expect(deleted).toBeLessThan(refs.length);
    expect(await heldBlobs(reader, refs)).toEqual(refs.slice(deleted));
    return output();
  } finally {
    await reader.close();
  }
}
