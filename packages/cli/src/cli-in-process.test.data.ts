import { runCli } from "./run-cli.js";

/** What a run of the command answered: its exit code and what it wrote. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The variables a command reads through `io.env` only: no driver reads them from the process. */
const CLI_VARIABLES = new Set(["AGENT_LEDGER_STORE", "AGENT_LEDGER_CONNECT_TIMEOUT_MS"]);

/**
 * Whether a run with `env` (on top of this process's) and no directory of its own can be made
 * in this process: `runCli` is all `bin.js` runs but for the process wiring, which `bin.test.ts`
 * covers. Another variable (a driver's `PGPASSWORD`, `NODE_OPTIONS`, an operator's `OTEL_*`) or a
 * working directory is the process's own, so such a run starts the binary.
 */
export function runsInProcess(env: Record<string, string | undefined>, cwd?: string): boolean {
  return cwd === undefined && Object.keys(env).every((name) => CLI_VARIABLES.has(name));
}

/**
 * Runs the CLI's `runCli` in this process, with `env` on top of this process's environment,
 * and collects what it writes. A test file's runs of the command
 * then cost a call each, not a Node process starting and loading the CLI (about 0.6 CPU-s).
 */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string | undefined>,
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
