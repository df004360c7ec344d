import { type ChildProcess, spawn } from "node:child_process";
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";

/**
 * The compiled copy of a script beside a test's source: `compiledBeside("./child.js",
 * import.meta.url)` in `src/testing/x.ts` is `dist/testing/child.js`. Tests run after `tsc -b`,
 * and a child process runs JavaScript, so a crash test's child is the built one.
 */
export function compiledBeside(specifier: string, base: string): string {
  // The last `src` folder of the path is the package's source root.
  return fileURLToPath(new URL(specifier, base)).replace(
    /([\\/])src([\\/])(?!.*[\\/]src[\\/])/,
    "$1dist$2",
  );
}

/**
 * Runs `node <nodeArgs>` (a script file and its arguments, or `--input-type=module -e <source>`)
 * and kills the child with SIGKILL as soon as it prints a line that is exactly `marker`: a crash
 * at a known point, as a real process dies, with no cleanup, no `finally` and no flush.
 * Resolves with what the child printed once it is dead; rejects if it exits any other way
 * (with its output and stderr), so a child that never reached its crash point fails the test.
 */
export function killAtMarker(nodeArgs: string[], marker: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!killed && stdout.split("\n").slice(0, -1).includes(marker)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (killed && signal === "SIGKILL") resolve({ stdout });
      else
        reject(
          new Error(
            `the child exited with ${code ?? signal} before printing ${marker}\nstdout: ${stdout}\nstderr: ${stderr}`,
          ),
        );
    });
  });
}

/** What a child that speaks in JSON lines said, and how it ended. */
export interface ChildLinesEnd<Line> {
  lines: Line[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs `node <nodeArgs>`, a child that prints one JSON value per line (its progress, its side
 * effects, its outcome): `heard` hears each as it comes, with the child, so a test can kill,
 * stop or continue it at a known point (SIGKILL, SIGSTOP, SIGCONT). `exited` resolves with every
 * line, the signal that ended it and its stderr once it is gone.
 */
export function childLines<Line>(
  nodeArgs: string[],
  heard: (line: Line, child: ChildProcess) => void = () => {},
): { child: ChildProcess; exited: Promise<ChildLinesEnd<Line>> } {
  const child = spawn(process.execPath, nodeArgs, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: Line[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout }).on("line", (text) => {
    const line = JSON.parse(text) as Line;
    lines.push(line);
    heard(line, child);
  });
  const exited = new Promise<ChildLinesEnd<Line>>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (_code, signal) => resolve({ lines, signal, stderr }));
  });
  return { child, exited };
}

const REPORT = "REPORT ";

/**
 * In a crash child: tells the test `value` (plain JSON) on stdout, as one line. Written
 * synchronously, so it is out before anything else runs: a SIGKILL a moment later cannot lose
 * it. What a child did before it died (side effects, provider calls) reaches the test this way,
 * and the test adds it to what the resumed run does.
 */
export function reportToParent(value: unknown): void {
  writeSync(1, `${REPORT}${JSON.stringify(value)}\n`);
}

/** What a crash child reported with `reportToParent`, in order, from its stdout. */
export function readReports<T = unknown>(stdout: string): T[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith(REPORT))
    .map((line) => JSON.parse(line.slice(REPORT.length)) as T);
}

// Set once this process reached its crash point: from then on no HaltingStore append returns.
let processHalted = false;

/**
 * Prints `marker` on its own line (synchronously, so it is out before anything else runs) and
 * never settles: the child stops exactly here until `killAtMarker` kills it. Call it inside a
 * tool or model call to crash while that call is in flight. From then on, every HaltingStore
 * of the process hangs, as the ledger of a dead process would.
 *
 * A promise that never settles does not keep Node running: with nothing else pending, the
 * child would exit by itself (code 13, an unsettled top-level await) and race the SIGKILL. A
 * timer keeps it alive, and ends it if the test process that was to kill it is gone.
 */
export function haltHere(marker: string): Promise<never> {
  processHalted = true;
  writeSync(1, `${marker}\n`);
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 200);
  return new Promise<never>(() => {});
}

/**
 * A store for a child that is to be killed: `store` is the wrapped store, except that once the
 * process halts (`haltHere` anywhere in it, or after an append holding an event matching
 * `haltAfter`'s predicate has committed) its appends never return. Calls running beside the
 * one that halts (a parallel tool call, a framework saving its state) then record nothing
 * more before the kill, however long the kill takes to land: as in a process that died there.
 */
export class HaltingStore {
  readonly store: EventStore;
  readonly #marker: string;
  #after: ((event: NewEvent) => boolean) | undefined;

  constructor(inner: EventStore, marker: string) {
    this.#marker = marker;
    const append: EventStore["append"] = async (request) => {
      if (processHalted) return new Promise<never>(() => {});
      const result = await inner.append(request);
      if (this.#after !== undefined && request.events.some(this.#after)) return this.halt();
      // A crash point reached while this append ran: its writer never hears back.
      if (processHalted) return new Promise<never>(() => {});
      return result;
    };
    this.store = new Proxy(inner, {
      get(target, property) {
        if (property === "append") return append;
        const value: unknown = Reflect.get(target, property, target);
        // Methods with private fields must run on the store itself, not on the proxy.
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** Halts right after an append holding an event that matches `when` has committed. */
  haltAfter(when: (event: NewEvent) => boolean): this {
    this.#after = when;
    return this;
  }

  /** Halts here: `haltHere` with this store's marker. */
  halt(): Promise<never> {
    return haltHere(this.#marker);
  }
}

/**
 * `store` with one change: once an append holding an event that matches `when` has committed,
 * the append prints `marker` and never returns, and every later append hangs too. In a child
 * run by `killAtMarker`, that is a process killed right after that event reached the ledger and
 * before its writer learned so.
 */
export function haltAfterAppend(
  store: EventStore,
  when: (event: NewEvent) => boolean,
  marker: string,
): EventStore {
  return new HaltingStore(store, marker).haltAfter(when).store;
}
