import { runCli } from "../run-cli.js";

/** What a run of the command answered: its exit code and what it wrote. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `agent-ledger ...args` in this process (the CLI's `runCli`, all that its binary runs but
 * for the process wiring) and collects its exit code and what it wrote. `env` goes on top of this
 * process's environment, with $AGENT_LEDGER_STORE unset unless `env` sets it, so the store is the
 * one the arguments name. A test's runs of the command then cost a call each, not a Node process
 * starting and loading the CLI (about 0.6 CPU-s each). A run that needs a process of its own (a
 * working directory, a variable a driver or Node reads from the process) starts the binary.
 */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(args, {
    stdout: { write: (chunk: string) => stdout.push(chunk) > 0 },
    stderr: { write: (chunk: string) => stderr.push(chunk) > 0 },
    env: { ...process.env, AGENT_LEDGER_STORE: "", ...env },
  });
  return { code, stdout: stdout.join(""), stderr: stderr.join("") };
}
