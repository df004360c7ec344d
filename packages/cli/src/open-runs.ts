import { type RunView, runsInTreeOrder, type SessionInspection } from "@agent-ledger/core";
import { counted } from "./format.js";
import { waitingWithPause } from "./paused-runs.js";

/**
 * A run still open (`running`) with no call in flight in its tree and no pause: the ledger does
 * not say whether a process still runs it. `text`: what to do about it, as `inspect` (text and
 * `--json`) and the viewer say it.
 */
export interface OpenRun {
  runId: string;
  text: string;
}

// No agent-ledger command closes a run alone: a run closed under a live agent would fail its
// next append (run-closed), so closing is left to the app that runs the agent.
const NEXT =
  "if no process runs it any more, resume it in the app that runs the agent (the resume goes on from what the ledger holds); if no agent will, it can stay open: no call in it waits on a decision";

/** What the list of open runs is headed with (inspect and the viewer). */
export function openRunsHeading(open: readonly OpenRun[]): string {
  const runs = counted(open.length, "run");
  return `○ ${runs} open with nothing in flight: inspect cannot tell a run whose process is still at work from one whose process died (after a decision with agent-ledger resolve, say)`;
}

/**
 * The runs that read RUNNING with no next step: open, not waiting with a pause, in a tree (a
 * top-level run and the runs under it) with no call in flight, whose next step would say what
 * to do. A run under one of them is left out: resuming the outer agent is the step for both.
 */
export function openRuns(inspection: SessionInspection): OpenRun[] {
  const waiting = waitingWithPause(inspection.runs);
  const holding = new Set(inspection.unresolved.map((attempt) => attempt.runId));
  const open: OpenRun[] = [];
  for (const root of inspection.runs) {
    const tree = runsInTreeOrder([root]);
    if (tree.some(({ run }) => holding.has(run.runId))) continue;
    const listed = new Set<RunView>();
    for (const { run, parent } of tree) {
      if (run.status !== "running" || waiting.has(run.runId)) continue;
      listed.add(run);
      if (parent === undefined || !listed.has(parent)) open.push({ runId: run.runId, text: NEXT });
    }
  }
  return open;
}
