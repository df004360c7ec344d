// The example agent (dist/main.js) and the agent-ledger binary as child processes: what the
// crash test and the demo both drive.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "@agent-ledger/cli";

export const exampleRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const main = join(exampleRoot, "dist", "main.js");
/** The agent-ledger binary the on-call person runs. */
const cliBin = join(dirname(fileURLToPath(import.meta.resolve("@agent-ledger/cli"))), "bin.js");

export interface Outcome {
  /** The exit code; null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `agent-ledger --store sqlite:<db> ...args` (the store from the environment ignored).
 * `command`: that line as a person types it in this repository, where the demo runs and no
 * agent-ledger is on the PATH (`npm run agent-ledger -- ...`, as the viewer line the demo prints
 * and `npm run demo`'s commands), quoted as the CLI quotes what it prints.
 */
export function agentLedger(db: string, ...args: string[]): Promise<Outcome & { command: string }> {
  const argv = ["--store", `sqlite:${db}`, ...args];
  const command = ["npm", "run", "agent-ledger", "--", ...argv].map(shellQuote).join(" ");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliBin, ...argv],
      { env: { ...process.env, AGENT_LEDGER_STORE: "" } },
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          signal: null,
          stdout,
          stderr,
          command,
        }),
    );
  });
}

/**
 * Starts the agent: `main.js <run|resume|resolve> <db> <work dir> [reason]`. Its stderr is
 * echoed when it exits other than 0, 3 (stopped on an unresolved attempt) or by a signal.
 */
export function startAgent(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Outcome> } {
  const child = spawn(process.execPath, [main, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const done = new Promise<Outcome>((resolve) => {
    child.on("close", (code, signal) => {
      if (code !== 0 && code !== 3 && code !== null) process.stderr.write(stderr);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/** Runs the agent and SIGKILLs it as soon as it reports being inside `tool`. */
export async function runAndKillInside(args: string[], tool: string): Promise<Outcome> {
  const { child, done } = startAgent(args, { CRASH_IN: tool });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk) => {
      seen += String(chunk);
      if (seen.includes(`INSIDE ${tool}`)) {
        child.kill("SIGKILL");
        resolve();
      }
    });
    child.on("close", () => reject(new Error(`the agent exited before reaching ${tool}`)));
  });
  return done;
}

/** The lines of a work file (a side effect each), 0 if it was never written. */
export function lines(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

/** The answer a finished run prints (`FINAL <json>`). */
export function finalOf(stdout: string): string | undefined {
  const line = stdout.split("\n").find((entry) => entry.startsWith("FINAL "));
  return line ? (JSON.parse(line.slice(6)) as string) : undefined;
}

/** The attempt id a resume that stopped prints (`UNRESOLVED <attemptId>`). */
export function unresolvedOf(stdout: string): string | undefined {
  return /^UNRESOLVED (\S+)/m.exec(stdout)?.[1];
}
