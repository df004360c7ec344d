/** The variables a command reads through `io.env` only: no driver reads them from the process. */
const CLI_VARIABLES = new Set(["AGENT_LEDGER_STORE", "AGENT_LEDGER_CONNECT_TIMEOUT_MS"]);

/**
 * Whether a run with `env` (on top of this process's) and no directory of its own can be made
 * in this process (`runCliInProcess`): `runCli` is all `bin.js` runs but for the process wiring,
 * which `bin.test.ts` covers. Another variable (a driver's `PGPASSWORD`, `NODE_OPTIONS`, an
 * operator's `OTEL_*`) or a working directory is the process's own, so such a run starts the
 * binary.
 */
export function runsInProcess(env: Record<string, string | undefined>, cwd?: string): boolean {
  return cwd === undefined && Object.keys(env).every((name) => CLI_VARIABLES.has(name));
}
