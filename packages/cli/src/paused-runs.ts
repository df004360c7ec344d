import type {
  AwaitedCallView,
  AwaitingDecisionView,
  RunView,
  SessionInspection,
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
  const pending = [...runs].reverse();
  for (let run = pending.pop(); run !== undefined; run = pending.pop()) {
    if (run.awaitingDecision !== undefined)
      paused.push({ runId: run.runId, text: pauseText(run.awaitingDecision) });
    for (let index = run.children.length - 1; index >= 0; index--)
      pending.push(run.children[index] as (typeof run.children)[number]);
  }
  return paused;
}

/** The run of each run in a paused run's tree (itself included) that is paused. */
export function pausedAbove(runs: readonly RunView[]): Map<string, string> {
  const above = new Map<string, string>();
  const visit = (run: RunView, paused: string | undefined) => {
    const own = run.awaitingDecision !== undefined ? run.runId : paused;
    if (own !== undefined) above.set(run.runId, own);
    for (const child of run.children) visit(child, own);
  };
  for (const run of runs) visit(run, undefined);
  return above;
}

/** `inspect --json` and the viewer: the inspection with `paused` when a run is. */
export function withPausedRuns<T extends SessionInspection>(
  inspection: T,
): T & { paused?: PausedRun[] } {
  const paused = pausedRuns(inspection.runs);
  return paused.length === 0 ? inspection : { ...inspection, paused };
}
