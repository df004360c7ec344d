// The example agent (dist/main.js) and the agent-ledger binary as child processes, and the
// files one scenario's processes share: what the crash tests and the demo both drive.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "@agent-ledger/cli";

export const exampleRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const main = join(exampleRoot, "dist", "main.js");
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

export interface Outcome {
  result?: { text: string; steps: number };
  error?: { code?: string; message: string };
  killed: boolean;
}

/** Runs the agent in a child process; with `killOn`, SIGKILLs it when it prints that line. */
export function runAgentProcess(args: string[], killOn?: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (killOn && !killed && out.includes(`${killOn}\n`)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      const line = (prefix: string) =>
        out
          .split("\n")
          .find((item) => item.startsWith(`${prefix} `))
          ?.slice(prefix.length + 1);
      const result = line("RESULT");
      const error = line("ERROR");
      resolve({
        killed,
        ...(result ? { result: JSON.parse(result) } : {}),
        ...(error ? { error: JSON.parse(error) } : {}),
      });
    });
  });
}

/** What a scenario's processes did, read from its files: model calls and side effects. */
export interface Counts {
  /** Model calls started (a call cut by a crash counts, though it never answered). */
  started: number;
  /** Model calls that delivered their answer. */
  finished: number;
  /** The tools' side effects, a line each. */
  effects: string[];
}

/**
 * One scenario in `dir` (made if missing): its ledger, the files its processes count model calls
 * and side effects in, and the arguments of main.js for it (session "order-42", run "run-1").
 */
export function scenario(dir: string) {
  mkdirSync(dir, { recursive: true });
  const files = {
    db: join(dir, "ledger.db"),
    calls: join(dir, "model-calls.log"),
    effects: join(dir, "effects.log"),
  };
  const lines = (file: string) =>
    existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  return {
    files,
    args: (mode: "generate" | "stream", start: "new" | "resume", crashAt?: string) => [
      files.db,
      "run-1",
      mode,
      start,
      files.calls,
      files.effects,
      ...(crashAt ? [crashAt] : []),
    ],
    counts: (): Counts => {
      const calls = lines(files.calls);
      return {
        started: calls.filter((line) => line.startsWith("start")).length,
        finished: calls.filter((line) => line.startsWith("finish")).length,
        effects: lines(files.effects),
      };
    },
  };
}
