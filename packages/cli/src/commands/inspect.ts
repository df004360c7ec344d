import { terminalJson } from "../format.js";
import { warnMissingBlob, writeOut } from "../io.js";
import { inspectForDecision, withNextSteps } from "../next-steps.js";
import { renderInspection } from "../render-inspection.js";
import { assertSessionExists } from "../store.js";
import { commandStoreUrl } from "../store-url.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const inspectHelp = `agent-ledger inspect <session> [--json]
  The run tree: each run with its status and duration, steps and attempts, child runs under
  the call that caused them; unresolved attempts are marked "!! UNRESOLVED" and listed. A run
  paused at an approval (its adapter's checkpoint says so) is listed with the calls it waits
  on: those are decided in the app that runs the agent, not with \`resolve\`; the calls its
  pause keeps open are marked "⏸ WAITING ON A DECISION", listed under it, not as unresolved.
  An agent's call that is a decision itself comes before the calls made inside it: the resume
  asks about it first. A call in flight inside a tool call that ended is settled with it
  (abandoned by the next resume, or by resolve --abandon run again on an abandoned call).
  --json: the inspection, \`nextSteps\` (one per unresolved attempt, in its order): what to do
  about it, with the \`resolve\` command the text output prints, and \`paused\` (when a run
  is): each paused run with what the text output says of it.
  The command names the store given with --store (a password in it shown as ***); a store
  from $AGENT_LEDGER_STORE is left to the environment.`;

export async function inspectCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "inspect");
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  const inspection = await inspectForDecision(store, sessionId);
  for (const ref of inspection.missingBlobs ?? []) warnMissingBlob(context.io.stderr, ref);
  // The store the printed command names, as the viewer's page names it (store-url.ts).
  const storeUrl = commandStoreUrl(context);
  const options = storeUrl === undefined ? {} : { storeUrl };
  // --json: the same decisions the text prints, for a script that acts on them.
  if (json) {
    const answer = JSON.stringify(withNextSteps(inspection, options), null, 2);
    await writeOut(context.io.stdout, `${terminalJson(answer)}\n`);
  } else await writeOut(context.io.stdout, renderInspection(inspection, options));
  return 0;
}
