import type { AttemptView, RunView } from "@agent-ledger/core";

// What `inspect` and the viewer say of an agent used as a tool (its call's request says its
// effect is that of its child runs, `effectInChildRuns`) whose agent may have run calls the
// ledger does not hold. One rule and one text for both: render-inspection.ts prints them as
// `!!` lines, page-inspection.ts sends them to the page's tree.

/**
 * Under child run `run` of the agent call `calledBy` (the call of its parent run that caused
 * it), when its `run.started` does not say it records every call: its agent ran calls the ledger
 * may not hold (a plain SDK tool of an agent used as a tool that was not given to
 * `instrumentAgent`, or was given a tool or handoff after it: the agent's calls are read as it
 * starts), so the run reads as a whole story when it may not be one. Undefined otherwise.
 */
export function unrecordedInsideText(
  run: Pick<RunView, "recordsEveryCall">,
  calledBy: AttemptView | undefined,
): string | undefined {
  if (calledBy?.effectInChildRuns !== true || run.recordsEveryCall === true) return undefined;
  return `its agent does not record every call it makes: a call inside may have run unrecorded (give the agent behind ${calledBy.name ?? "that tool"} to instrumentAgent, after its last tool and handoff are added)`;
}

/**
 * Under an agent call that completed with no child run: its agent recorded nothing (its model
 * was its own, not a recorded one, and it was not given to `instrumentAgent`). `stepHasChild`:
 * an attempt of the call's step has a child run; a call made again goes on on the child run its
 * first attempt opened, so a retry with none of its own is no sign its agent recorded nothing.
 * Undefined otherwise.
 */
export function nothingRecordedText(
  attempt: AttemptView,
  stepHasChild: boolean,
): string | undefined {
  if (stepHasChild || attempt.effectInChildRuns !== true || attempt.status !== "completed")
    return undefined;
  return `its agent recorded nothing here: what it did ran unrecorded (give the agent behind ${attempt.name ?? "that tool"} to instrumentAgent)`;
}
