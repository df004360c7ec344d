import { inspectSession, LedgerError, type SessionInspection } from "@agent-ledger/core";
import { writeOut } from "../io.js";
import { renderInspection } from "../render-inspection.js";
import { assertSessionExists } from "../store.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const inspectHelp = `agent-ledger inspect <session> [--json]
  The run tree: each run with its status and duration, steps and attempts, child runs under
  the call that caused them; unresolved attempts are marked "!! UNRESOLVED" and listed.`;

export async function inspectCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "inspect");
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  let inspection: SessionInspection;
  try {
    inspection = await inspectSession(store, sessionId);
  } catch (error) {
    if (!LedgerError.isInstance(error, "not-found")) throw error;
    // The session exists, so what is missing is a blob an event names. What was in flight is
    // still in the events: show them with their blob references, and say what is missing.
    context.io.stderr.write(
      `agent-ledger: warning: ${error.message}; the calls are shown with their blob references unresolved\n`,
    );
    inspection = await inspectSession(store, sessionId, { resolve: false });
  }
  if (json) await writeOut(context.io.stdout, `${JSON.stringify(inspection, null, 2)}\n`);
  else
    await writeOut(context.io.stdout, renderInspection(inspection, { storeUrl: context.storeUrl }));
  return 0;
}
