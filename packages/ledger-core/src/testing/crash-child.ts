import { spawn } from "node:child_process";
import { writeSync } from "node:fs";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";

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

/**
 * Prints `marker` on its own line (synchronously, so it is out before anything else runs) and
 * never settles: the child stops exactly here until `killAtMarker` kills it. Call it inside a
 * tool or model call to crash while that call is in flight.
 */
export function haltHere(marker: string): Promise<never> {
  writeSync(1, `${marker}\n`);
  return new Promise<never>(() => {});
}

/**
 * `store` with one change: once an append holding an event that matches `when` has committed,
 * the append prints `marker` and never returns, and every later append hangs too. In a child
 * run by `killAtMarker`, that is a process killed right after that event reached the ledger and
 * before its writer learned so. Everything else is the store's own method.
 */
export function haltAfterAppend(
  store: EventStore,
  when: (event: NewEvent) => boolean,
  marker: string,
): EventStore {
  let halted = false;
  const append: EventStore["append"] = async (request) => {
    if (halted) return new Promise<never>(() => {});
    const result = await store.append(request);
    if (!request.events.some(when)) return result;
    halted = true;
    return haltHere(marker);
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") return append;
      const value: unknown = Reflect.get(target, property, target);
      // Methods with private fields must run on the store itself, not on the proxy.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
