import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { StoreUnavailableError } from "../../events/errors.js";
import { stopBeforeNextPage } from "../../store/stop-signal.js";
import { type FileCheckAnswer, quickCheck } from "./quick-check.js";
import { openFailure } from "./sqlite-connection.js";

/** Options of `SqliteEventStore.fileProblems`. */
export interface FileProblemsOptions {
  /**
   * Stops the check once aborted (a CLI's Ctrl-C on a file of gigabytes): the check's process
   * is killed and the answer is `{ stopped: true }`. Already aborted: no check is begun.
   */
  signal?: AbortSignal;
}

/**
 * What `fileProblems` answers when its `signal` stopped the check before it finished: nothing
 * is known of the file. Not a list, so it cannot pass for an empty one (a sound file).
 */
export interface FileCheckStopped {
  stopped: true;
}

/** The script the check runs in, compiled beside this file. */
const script = fileURLToPath(new URL("./file-check-process.js", import.meta.url));

/** What is kept of the check process's stderr for an error: its end, where Node says why. */
const STDERR_KEPT = 4000;

/**
 * `PRAGMA quick_check` on the file of `database` (the store's connection, open), where the
 * store's `location` names it in errors. A database in memory is the connection's alone (and
 * small): checked on it. A file is checked by a process of its own on a read-only connection
 * (file-check-process.ts), so that `signal` can stop it: killed, it stops at once, where the
 * statement on a connection of this process would run to its end, minutes on a large file.
 */
export async function checkFile(
  database: Database.Database,
  location: string,
  signal: AbortSignal | undefined,
): Promise<string[] | FileCheckStopped> {
  if (await stopBeforeNextPage(signal)) return { stopped: true };
  if (database.memory) return quickCheck(database);
  // better-sqlite3 takes a `file:` URI as it is; a path is resolved here, where it was opened.
  const path = database.name.startsWith("file:") ? database.name : resolve(database.name);
  return checkInProcess(path, location, signal);
}

function checkInProcess(
  path: string,
  location: string,
  signal: AbortSignal | undefined,
): Promise<string[] | FileCheckStopped> {
  return new Promise((settle, fail) => {
    // Not this process's exec arguments (an inspector's port, a loader): a plain node.
    const child = spawn(process.execPath, [script, path], {
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    let stdout = "";
    let stderr = "";
    let killed = false;
    let settled = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT);
    });
    const kill = () => {
      killed = true;
      child.kill("SIGKILL");
    };
    const done = (finish: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", kill);
      process.off("exit", kill);
      finish();
    };
    signal?.addEventListener("abort", kill, { once: true });
    // This process ending first (a second Ctrl-C exits at once) takes the check with it.
    process.once("exit", kill);
    child.once("error", (error) =>
      done(() =>
        fail(
          new StoreUnavailableError(
            `cannot start SQLite's check of ${location} in a process of its own: ${String(error)}`,
            error,
          ),
        ),
      ),
    );
    child.once("close", (code, exitSignal) =>
      done(() => {
        const answer = parsed(stdout);
        // An answer whole is the check's, even if the signal came as it ended.
        if (answer !== undefined && "problems" in answer) return settle(answer.problems);
        if (answer !== undefined) {
          const cause = Object.assign(new Error(answer.openFailure.message), answer.openFailure);
          return fail(new StoreUnavailableError(openFailure(location, cause), cause));
        }
        if (killed) return settle({ stopped: true });
        fail(
          new StoreUnavailableError(
            `SQLite's check of ${location} ended without an answer (${
              exitSignal === null ? `exit code ${code}` : `killed by ${exitSignal}`
            })${stderr.trim() === "" ? "" : `: ${stderr.trim()}`}`,
          ),
        );
      }),
    );
  });
}

/** The check process's answer, or undefined when it wrote none whole. */
function parsed(stdout: string): FileCheckAnswer | undefined {
  try {
    const answer = JSON.parse(stdout) as FileCheckAnswer;
    if (typeof answer === "object" && answer !== null) {
      if ("problems" in answer && Array.isArray(answer.problems)) return answer;
      if ("openFailure" in answer && typeof answer.openFailure === "object") return answer;
    }
  } catch {
    // Cut short: killed while it wrote, or it wrote nothing.
  }
  return undefined;
}
