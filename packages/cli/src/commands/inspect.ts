import { type SessionInspection, stopBeforeNextPage } from "@agent-ledger/core";
import { terminalJson, terminalLine } from "../format.js";
import { interrupted, LineWriter, warnMissingBlob, writeOut } from "../io.js";
import { writeJson } from "../json-writer.js";
import { inspectForDecision, withNextSteps } from "../next-steps.js";
import { notIntactRuns, warnNotIntact } from "../not-intact.js";
import { inspectionLines } from "../render-inspection.js";
import {
  assertNotDeletedWhileRead,
  assertSessionExists,
  ReadsStopped,
  stoppingReads,
} from "../store.js";
import { commandStoreOptions } from "../store-url.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const inspectHelp = `agent-ledger inspect <session> [--json]
  The run tree: each run with its status and duration, steps and attempts, child runs under
  the call that caused them; unresolved attempts are marked "!! UNRESOLVED" and listed. A run
  paused at an approval (its adapter's checkpoint says so) is listed with the calls it waits
  on: those are decided in the app that runs the agent, not with \`resolve\`; the calls its
  pause keeps open are marked "⏸ WAITING ON A DECISION", listed under it, not as unresolved.
  A run whose seqs have a gap (rows deleted by hand, or lost) is marked "!! ... is not intact"
  with the \`verify\` command to run: what is shown of it is not what was recorded.
  An agent's call that is a decision itself comes before the calls made inside it: the resume
  asks about it first. A call in flight inside a tool call that ended is settled with it
  (abandoned by the next resume, or by resolve --abandon run again on an abandoned call).
  A run open with nothing in flight in its tree is listed, marked "○", with what to do: inspect
  cannot tell a run whose process is at work from one whose process died.
  --json: the inspection, \`nextSteps\` (one per unresolved attempt, in its order): what to do
  about it, with the \`resolve\` command the text output prints, \`paused\` (when a run
  is): each paused run with what the text output says of it, \`openRuns\` (when a run is
  open with nothing in flight): each with what the text says, and \`notIntact\` (when a run
  is): each run with a gap (\`seqGap\`) and the warning, also printed on stderr.
  The command names the store given with --store (a password in it shown as ***); a store
  from $AGENT_LEDGER_STORE is left to the environment.
  Ctrl-C stops it (exit 130): between pages of the session it reads, or between chunks of
  what it prints.`;

export async function inspectCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "inspect");
  const store = await context.openStore();
  await assertSessionExists(store, sessionId, context);
  const { signal, stdout, stderr } = context.io;
  // Ctrl-C: stopped between pages of the read, or between chunks of what it writes (exit 130).
  const stop = (when: string) => interrupted(stderr, "inspect", when);
  let inspection: SessionInspection;
  try {
    inspection = await inspectForDecision(stoppingReads(store, signal), sessionId);
  } catch (error) {
    if (error instanceof ReadsStopped) return await stop("while reading the session");
    throw error;
  }
  // Deleted part way through the read, it would show open runs and calls in flight.
  await assertNotDeletedWhileRead(
    store,
    sessionId,
    "inspect",
    "what was read of it may be cut short",
  );
  for (const ref of inspection.missingBlobs ?? []) warnMissingBlob(stderr, ref);
  // The store the printed command names, as the viewer's page names it (store-url.ts).
  const options = commandStoreOptions(context);
  if (await stopBeforeNextPage(signal)) return await stop("before writing");
  // --json: the same decisions the text prints, for a script that acts on them.
  if (json) {
    // The text prints it on the run; here on stderr, and in the answer for a script.
    const notIntact = notIntactRuns(inspection.runs, inspection.sessionId, options);
    await warnNotIntact(stderr, notIntact);
    const answer = withNextSteps(inspection, options);
    // Written as it is made (a long session's text is past the longest string V8 makes), each
    // string escaped as terminalJson escapes the whole text.
    const shown = notIntact.length > 0 ? { ...answer, notIntact } : answer;
    const whole = await writeJson(stdout, shown, { signal, escapeStrings: terminalJson });
    if (!whole) return await stop("while writing");
    await writeOut(stdout, "\n");
  } else {
    const lines = new LineWriter(stdout, signal);
    for (const line of inspectionLines(inspection, options))
      if (!(await lines.line(terminalLine(line)))) return await stop("while writing");
    if (!(await lines.flush())) return await stop("while writing");
  }
  return 0;
}
