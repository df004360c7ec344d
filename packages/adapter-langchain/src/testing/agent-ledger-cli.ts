import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The `agent-ledger` binary the on-call person runs: the CLI package's build in this repository
 * (it is built with every package by `tsc -b` before the tests run).
 */
const BIN = fileURLToPath(new URL("../../../cli/dist/bin.js", import.meta.url));

/** Runs `agent-ledger ...args --store sqlite:<path>` as a child process. */
export function agentLedger(
  path: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx tsc -b first`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "--store", `sqlite:${path}`, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "" }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
