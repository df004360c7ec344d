import { parseArgs } from "node:util";
import { inspectSession } from "@agent-ledger/core";
import { usageError } from "../errors.js";
import { writeOut } from "../io.js";
import { renderInspection } from "../render-inspection.js";
import { assertSessionExists } from "../store.js";
import type { CommandContext } from "./context.js";

export const inspectHelp = `agent-ledger inspect <session> [--json]
  The run tree: each run with its status and duration, steps and attempts, child runs under
  the call that caused them; unresolved attempts are marked "!! UNRESOLVED" and listed.`;

export async function inspectCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args: context.args,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError("usage: agent-ledger inspect <session> [--json]");
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  const inspection = await inspectSession(store, sessionId);
  if (values.json) await writeOut(context.io.stdout, `${JSON.stringify(inspection, null, 2)}\n`);
  else
    await writeOut(context.io.stdout, renderInspection(inspection, { storeUrl: context.storeUrl }));
  return 0;
}
