import type { AttemptView, RunView, SessionInspection } from "./inspection-views.js";
import { runsInTreeOrder } from "./run-tree-order.js";

/** How a tool call that will not run again ended. */
export type OuterCallEnd = "abandoned" | "completed" | "failed";

/**
 * The tool call that ended (abandoned, completed or failed) with a call still in flight in the
 * runs made inside it: its last attempt, and how it ended.
 */
export interface EndedOuterCall {
  attempt: AttemptView;
  ended: OuterCallEnd;
}

type Inspected = Pick<SessionInspection, "runs" | "unresolved">;

const ENDS = new Set<string>(["abandoned", "completed", "failed"]);

/** The last attempt of a step: the one no later attempt retried. */
function lastOf(attempts: readonly AttemptView[]): AttemptView | undefined {
  return attempts.find((attempt) => attempt.retriedBy === undefined) ?? attempts.at(-1);
}

/**
 * For each of `inspection.unresolved` (same order), the tool call that ended with it in flight
 * inside it, whose settling (`settleCallsInside`: `agent-ledger resolve --abandon` run again on
 * an abandoned call, or the next resume) abandons it; undefined for a call no ended call holds.
 * A call is held by one when it is on an open child run of that call (found by `parentRunId`
 * and `causedByEventId`), at any depth through open runs: the nearest such ended call names it.
 * Such a call is never made again, and a person's decision on it would be dropped by that
 * settling: there is nothing to decide.
 */
export function endedOuterCalls(inspection: Inspected): (EndedOuterCall | undefined)[] {
  if (inspection.unresolved.length === 0) return [];
  const held = new Map<string, EndedOuterCall>();
  // The ended call each run is inside, found as its parent is walked (a parent comes first).
  const outerOf = new Map<RunView, EndedOuterCall>();
  for (const { run } of runsInTreeOrder(inspection.runs)) {
    const outer = outerOf.get(run);
    const stepOf = new Map<string, AttemptView[]>();
    for (const step of run.steps)
      for (const attempt of step.attempts) {
        if (step.kind === "tool") stepOf.set(attempt.requestEventId, step.attempts);
        if (outer !== undefined) held.set(`${run.runId}\n${attempt.attemptId}`, outer);
      }
    for (const child of run.children) {
      // Settling goes only through open runs a tool call of their parent made.
      const cause = child.status === "running" ? child.causedByEventId : undefined;
      const step = cause === undefined ? undefined : stepOf.get(cause);
      const last = step === undefined ? undefined : lastOf(step);
      if (last === undefined) continue;
      const inside = ENDS.has(last.status)
        ? { attempt: last, ended: last.status as OuterCallEnd }
        : outer;
      if (inside !== undefined) outerOf.set(child, inside);
    }
  }
  return inspection.unresolved.map((attempt) => held.get(`${attempt.runId}\n${attempt.attemptId}`));
}
