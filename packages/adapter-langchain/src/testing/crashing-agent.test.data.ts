import { spawn } from "node:child_process";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { compiledBeside, killAtMarker } from "@agent-ledger/core/testing";
import { ChildEffects, CRASH } from "./crash-point.js";
import type { CrashScenarioName } from "./crash-scenarios.test.data.js";

// The compiled child, beside this file's compiled copy: the tests run after `tsc -b`, so a
// child runs the adapter as built (build again after changing it, or the child runs old code).
const CHILD = compiledBeside("./crashing-agent.test.child.js", import.meta.url);

/**
 * Runs `scenario` in a child Node process recording into the SQLite ledger at `path`, and kills
 * it with SIGKILL at the scenario's crash point. Resolves once it is dead, with the effects it
 * had on the world before it died; fails if it ends any other way.
 */
export async function crashInChild(
  scenario: CrashScenarioName,
  path: string,
  ...args: string[]
): Promise<ChildEffects> {
  const { stdout } = await killAtMarker([CHILD, scenario, path, ...args], CRASH);
  return new ChildEffects(stdout);
}

/**
 * Runs `scenario` in a child Node process to its end (no crash): for a reference run that must
 * execute the same compiled code as a crashed child (a stack trace in an answer names its files).
 * Resolves with what it printed; fails unless it exits with 0.
 */
export function runInChild(
  scenario: CrashScenarioName,
  path: string,
  ...args: string[]
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, scenario, path, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${scenario} exited with ${code ?? signal}\nstderr: ${stderr}`));
    });
  });
}

/**
 * The SQLite ledger at `path`, opened as the process that resumes opens it, and closed by the
 * function `cleanup` is handed: pass the test's own `onTestFinished` (from its context, which
 * concurrent tests need).
 */
export async function openLedger(
  path: string,
  cleanup: (close: () => Promise<void>) => unknown,
): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path });
  await store.init();
  cleanup(() => store.close());
  return store;
}
