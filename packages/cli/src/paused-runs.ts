import {
  type AwaitedCallView,
  type AwaitingDecisionView,
  type RunView,
  runsInTreeOrder,
  type SessionInspection,
} from "@agent-ledger/core";
import { preview } from "./format.js";

/** A run paused awaiting a person's decision, as `inspect` (text and `--json`) and the viewer say it. */
export interface PausedRun {
  runId: string;
  /** "paused at an approval: charge [c1] {"amount":5} (agent shop); decide it with ..." */
  text: string;
}

function callText(call: AwaitedCallView): string {
  const id = call.toolCallId === undefined ? "" : ` [${call.toolCallId}]`;
  const args = call.args === undefined ? "" : ` ${preview(call.args, 100)}`;
  const agent = call.agent === undefined ? "" : ` (agent ${call.agent})`;
  return `${call.name}${id}${args}${agent}`;
}

// The calls, and who decides them where: in the app that runs the agent, which resumes the run
// with the person's decision. `agent-ledger resolve` decides calls in flight, not these.
function pauseText(pause: AwaitingDecisionView): string {
  const them = pause.calls.length === 1 ? "it" : "them";
  const where =
    pause.decideWith === undefined
      ? "in the app that runs the agent"
      : `with ${preview(pause.decideWith, 200)}`;
  return `paused at an approval: ${pause.calls.map(callText).join(", ")}; decide ${them} ${where}, not with agent-ledger resolve`;
}

/** Every run of the inspection paused awaiting a decision, in tree order. */
export function pausedRuns(runs: readonly RunView[]): PausedRun[] {
  const paused: PausedRun[] = [];
  for (const { run } of runsInTreeOrder(runs))
    if (run.awaitingDecision !== undefined)
      paused.push({ runId: run.runId, text: pauseText(run.awaitingDecision) });
  return paused;
}

/** The run of each run in a paused run's tree (itself included) that is paused. */
export function pausedAbove(runs: readonly RunView[]): Map<string, string> {
  const above = new Map<string, string>();
  // A parent comes first in tree order: its paused run is known.
  for (const { run, parent } of runsInTreeOrder(runs)) {
    const own =
      run.awaitingDecision !== undefined
        ? run.runId
        : parent === undefined
          ? undefined
          : above.get(parent.runId);
    if (own !== undefined) above.set(run.runId, own);
  }
  return above;
}

/** `inspect --json` and the viewer: the inspection with `paused` when a run is. */
export function withPausedRuns<T extends SessionInspection>(
  inspection: T,
): T & { paused?: PausedRun[] } {
  const paused = pausedRuns(inspection.runs);
  return paused.length === 0 ? inspection : { ...inspection, paused };
}
