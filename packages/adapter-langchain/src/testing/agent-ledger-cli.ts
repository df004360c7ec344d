import { type CliResult, runCliInProcess } from "@agent-ledger/cli/testing";

/**
 * Runs `agent-ledger --store sqlite:<path> ...args`, the command the on-call person runs, in this
 * process: the CLI package's build in this repository (`tsc -b` builds it before the tests run).
 */
export function agentLedger(path: string, ...args: string[]): Promise<CliResult> {
  return runCliInProcess(["--store", `sqlite:${path}`, ...args]);
}
