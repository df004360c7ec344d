import { copyFileSync, existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import {
  compiledBeside,
  killAtMarker,
  type ScratchHooks,
  scratchDirectory,
} from "@agent-ledger/core/testing";
import { onTestFinished } from "vitest";
import type { CrashScenario } from "./crash-scenarios.test.data.js";
import { DIED, type KilledProcess, parseReports } from "./crashing-child.js";

// The compiled child, beside this file's compiled copy (tests run after `tsc -b`).
const CHILD = compiledBeside("./crash-scenarios.test.child.js", import.meta.url);

/** A ledger file killed children left, and what each did before it died. */
interface Crash {
  path: string;
  killed: KilledProcess[];
}

/**
 * SQLite ledgers left by child processes SIGKILLed at a scenario's crash point
 * (CRASH_SCENARIOS). A test gets the ledger opened, as the process that goes on after the
 * crash, with what the killed processes reported doing. The files are in a scratch directory
 * named `prefix...`, made in the runner's `beforeAll` and removed in its `afterAll`, once every
 * child started is dead. Construct it at a test file's top level: a run that only collects the
 * file's tests (`vitest list`) runs no hook, so it makes no directory and starts no child.
 */
export class CrashedLedgers {
  readonly #directory: string;
  readonly #crashes = new Map<string, Promise<Crash>>();
  #files = 0;
  // Children running now, and those waiting for a place.
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  // Scenarios prepared before the directory was made, started once it is.
  #prepared: CrashScenario[] | undefined = [];

  constructor(prefix: string, hooks: ScratchHooks) {
    this.#directory = scratchDirectory(prefix, {
      beforeAll: (make) =>
        hooks.beforeAll(() => {
          make();
          const prepared = this.#prepared ?? [];
          this.#prepared = undefined;
          this.prepare(...prepared);
        }),
      afterAll: (remove) =>
        hooks.afterAll(async () => {
          // A child still loading (prepared for a test that did not run) must not outlive it.
          await Promise.allSettled(this.#crashes.values());
          remove();
        }),
    });
  }

  /**
   * Starts the children of `scenarios` (once the directory is made: at the file's `beforeAll`
   * when called at its top level), a few at a time, instead of when a test first asks for their
   * ledger: each takes about a second to load, and a file's tests run one by one.
   */
  prepare(...scenarios: CrashScenario[]): void {
    if (this.#prepared !== undefined) {
      this.#prepared.push(...scenarios);
      return;
    }
    // A child that fails is reported by the test that asks for its ledger.
    for (const scenario of scenarios) this.#crash([scenario]).catch(() => undefined);
  }

  /**
   * The ledger a child running `scenario` left when it was killed (opened, and the path of its
   * file), and what the child did.
   */
  async crashed(
    scenario: CrashScenario,
  ): Promise<{ store: SqliteEventStore; path: string; first: KilledProcess }> {
    const { store, path, killed } = await this.#open([scenario]);
    const [first] = killed;
    if (!first) throw new Error(`no child ran ${scenario}`);
    return { store, path, first };
  }

  /** `crashed(firstScenario)`, then a second child runs `secondScenario` on it, killed too. */
  async crashedTwice(
    firstScenario: CrashScenario,
    secondScenario: CrashScenario,
  ): Promise<{
    store: SqliteEventStore;
    path: string;
    first: KilledProcess;
    second: KilledProcess;
  }> {
    const { store, path, killed } = await this.#open([firstScenario, secondScenario]);
    const [first, second] = killed;
    if (!first || !second)
      throw new Error(`no children ran ${firstScenario} and ${secondScenario}`);
    return { store, path, first, second };
  }

  // Every test resumes a copy of what the children left: a test changes the ledger it resumes,
  // and several tests may go on from the same crash.
  async #open(chain: CrashScenario[]) {
    const crash = await this.#crash(chain);
    const path = this.#copy(crash.path);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    return { store, path, killed: structuredClone(crash.killed) };
  }

  // The children of `chain` run one after the other on one ledger, each killed at its crash
  // point; once per chain (a chain goes on from a copy of the crash of its first scenarios).
  #crash(chain: CrashScenario[]): Promise<Crash> {
    const key = chain.join(" / ");
    let crash = this.#crashes.get(key);
    if (crash) return crash;
    const last = chain.at(-1);
    if (last === undefined) throw new Error("no scenario to crash");
    crash = (async () => {
      const before = chain.length > 1 ? await this.#crash(chain.slice(0, -1)) : undefined;
      const path = before ? this.#copy(before.path) : this.#newFile();
      const killed = await this.#kill(last, path);
      return { path, killed: [...(before?.killed ?? []), killed] };
    })();
    this.#crashes.set(key, crash);
    return crash;
  }

  async #kill(scenario: CrashScenario, path: string): Promise<KilledProcess> {
    // As many children at once as there are CPUs: more only slows each one down. A child that
    // ends hands its place to the next one waiting.
    if (this.#running < availableParallelism()) this.#running++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      const { stdout } = await killAtMarker([CHILD, scenario, path], DIED);
      return parseReports(stdout);
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  #newFile(): string {
    return join(this.#directory, `ledger-${++this.#files}.db`);
  }

  // A closed WAL database is its file and its -wal file (the -shm is rebuilt on open).
  #copy(path: string): string {
    const copy = this.#newFile();
    copyFileSync(path, copy);
    if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
    return copy;
  }
}
