import { parseArgs } from "node:util";
import { usageError } from "../errors.js";
import type { CommandContext } from "./context.js";

/** The arguments of a command that reads one session: `<session> [--json]`. */
export function sessionArgs(
  context: CommandContext,
  command: string,
): { sessionId: string; json: boolean } {
  const { values, positionals } = parseArgs({
    args: context.args,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError(`usage: agent-ledger ${command} <session> [--json]`);
  return { sessionId, json: values.json === true };
}
