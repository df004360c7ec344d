import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type CliResult, runCliInProcess } from "@agent-ledger/cli/testing";

/**
 * The `agent-ledger` binary the on-call person runs: the CLI package's build in this repository
 * (it is built with every package by `tsc -b` before the tests run).
 */
const BIN = fileURLToPath(new URL("../../../cli/dist/bin.js", import.meta.url));

/** Runs `agent-ledger --store sqlite:<path> ...args` in this process. */
export function agentLedger(path: string, ...args: string[]): Promise<CliResult> {
  return runCliInProcess(["--store", `sqlite:${path}`, ...args]);
}

/**
 * Runs a command a message printed (the text between its backquotes, `agent-ledger ...`) as a
 * person pastes it: through bash, in `cwd`, with no $AGENT_LEDGER_STORE, so the store is only
 * the one the command names.
 */
export function pastedCommand(command: string, cwd: string): Promise<CliResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx tsc -b first`);
  if (!command.startsWith("agent-ledger "))
    throw new Error(`not an agent-ledger command: ${command}`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.AGENT_LEDGER_STORE;
  // The binary on no PATH: a shell function named like it runs the build.
  const script = `agent-ledger() { "$AGENT_LEDGER_NODE" "$AGENT_LEDGER_BIN" "$@"; }\n${command}`;
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", script],
      {
        cwd,
        env: { ...env, AGENT_LEDGER_NODE: process.execPath, AGENT_LEDGER_BIN: BIN },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
