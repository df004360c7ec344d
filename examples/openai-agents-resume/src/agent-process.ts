// The example's shop agent (dist/main.js) and the agent-ledger binary as child processes: what
// the crash tests and the demo both drive.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "@agent-ledger/cli";

export const exampleRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The example's programs: the shop agent (main.js) and the editor agent (writer-main.js). */
export type Program = "main.js" | "writer-main.js";
/** The agent-ledger binary the on-call person runs. */
const cliBin = join(dirname(fileURLToPath(import.meta.resolve("@agent-ledger/cli"))), "bin.js");

/**
 * Runs `agent-ledger --store sqlite:<db> ...args` (the store from the environment ignored).
 * `command`: that line as a person types it in this repository, where the demo runs and no
 * agent-ledger is on the PATH (`npm run agent-ledger -- ...`, as the viewer line the demo prints
 * and `npm run demo`'s commands), quoted as the CLI quotes what it prints.
 */
export function agentLedger(
  db: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; command: string }> {
  const argv = ["--store", `sqlite:${db}`, ...args];
  const command = ["npm", "run", "agent-ledger", "--", ...argv].map(shellQuote).join(" ");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliBin, ...argv],
      { env: { ...process.env, AGENT_LEDGER_STORE: "" } },
      (error, stdout, stderr) => {
        if (error) process.stderr.write(stderr);
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, command });
      },
    );
  });
}

/** What main.js prints last: the run's status and final output. */
export interface Outcome {
  status: string;
  finalOutput: unknown;
}

/** A tool call a resume got back as an interruption, and what main.js decided. */
export interface Decision {
  name: string;
  callId: string;
  decision: "approved" | "rejected";
}

/** The lines of a work file (a side effect or model call each), none if it was never written. */
export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

function start(program: Program, args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [join(exampleRoot, "dist", program), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * Runs a program to the end (`main.js <run|resume> <db> <work dir> <sessionId> <runId>
 * [stream|decided]`, `writer-main.js <run|resume> <db> <work dir>`): the outcome it prints on
 * its last line, and the interruptions main.js decided on the way (INTERRUPTED lines).
 */
export function runToEnd<T extends Outcome = Outcome>(
  args: string[],
  program: Program = "main.js",
): Promise<T & { decisions: Decision[] }> {
  return new Promise((resolve, reject) => {
    const child = start(program, args);
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${err}`));
      const printed = out.trim().split("\n");
      const decisions = printed
        .filter((line) => line.startsWith("INTERRUPTED "))
        .map((line) => JSON.parse(line.slice("INTERRUPTED ".length)) as Decision);
      resolve({ ...(JSON.parse(printed.at(-1) ?? "null") as T), decisions });
    });
  });
}

/** Starts a run, waits until it reports it is at `point` (CRASH_AT), then SIGKILLs it. */
export function killAt(args: string[], point: string, program: Program = "main.js"): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = start(program, args, { CRASH_AT: point });
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      if (out.includes(`CRASH_POINT ${point}`)) child.kill("SIGKILL");
    });
    child.on("close", (_code, signal) => {
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`the run ended before ${point}: ${out} ${err}`));
    });
  });
}

/** What one work directory's processes did: orders placed, warehouse notices, model calls. */
export function effects(dir: string) {
  const calls = lines(join(dir, "model-calls.log"));
  return {
    orders: lines(join(dir, "orders.log")),
    notified: lines(join(dir, "warehouse.log")),
    completedCalls: calls.filter((line) => line === "done").length,
    startedCalls: calls.filter((line) => line === "start").length,
  };
}
