import { inspectSession } from "@agent-ledger/core";
import { terminalJson } from "../format.js";
import { warnMissingBlob, writeOut } from "../io.js";
import { nextSteps } from "../next-steps.js";
import { renderInspection } from "../render-inspection.js";
import { assertSessionExists } from "../store.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const inspectHelp = `agent-ledger inspect <session> [--json]
  The run tree: each run with its status and duration, steps and attempts, child runs under
  the call that caused them; unresolved attempts are marked "!! UNRESOLVED" and listed.
  --json: the inspection, and \`nextSteps\` (one per unresolved attempt, in its order): what to do
  about it, with the \`resolve\` command the text output prints.`;

export async function inspectCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "inspect");
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  // A lost blob must not hide what was in flight: its marker is shown where its content was.
  const inspection = await inspectSession(store, sessionId, {
    resolve: "in-flight",
    missingBlobs: "keep",
  });
  for (const ref of inspection.missingBlobs ?? []) warnMissingBlob(context.io.stderr, ref);
  const options = { storeUrl: context.storeUrl };
  if (json) {
    // The same decisions the text prints, for a script that acts on them (the viewer's
    // session route answers the same shape).
    const answer = { ...inspection, nextSteps: nextSteps(inspection, options) };
    await writeOut(context.io.stdout, `${terminalJson(JSON.stringify(answer, null, 2))}\n`);
  } else await writeOut(context.io.stdout, renderInspection(inspection, options));
  return 0;
}
