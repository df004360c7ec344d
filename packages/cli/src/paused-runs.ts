import {
  type AwaitedCallView,
  type AwaitingDecisionView,
  type RunView,
  runsInTreeOrder,
  type SessionInspection,
} from "@agent-ledger/core";
import { attemptKey } from "./attempt-key.js";
import { counted, preview } from "./format.js";

/** A run paused awaiting a person's decision, as `inspect` (text and `--json`) and the viewer say it. */
export interface PausedRun {
  runId: string;
  /** "paused at an approval: charge [c1] {"amount":5} (agent shop); decide it with ..." */
  text: string;
  /** Set when a call it asks about was left in flight (`inFlightAttemptId`). */
  inFlight?: true;
}

// A call left in flight that the adapter asks about as an approval: no fresh request. The
// ledger holds its request and no outcome; a crash leaves a call so, and so does its caller
// stopping it while it ran (an abort writes nothing of itself): nothing here tells which.
export const LEFT_IN_FLIGHT = "left in flight by a crash or by its caller stopping it";
const IN_FLIGHT = `${LEFT_IN_FLIGHT}: it may have had its effect, check it before approving`;

function callText(call: AwaitedCallView): string {
  const id = call.toolCallId === undefined ? "" : ` [${call.toolCallId}]`;
  const args = call.args === undefined ? "" : ` ${preview(call.args, 100)}`;
  const agent = call.agent === undefined ? "" : ` (agent ${call.agent})`;
  const inFlight =
    call.inFlightAttemptId === undefined
      ? ""
      : ` (${IN_FLIGHT}; attempt ${call.inFlightAttemptId})`;
  return `${call.name}${id}${args}${agent}${inFlight}`;
}

// The calls, and who decides them where: in the app that runs the agent, which resumes the run
// with the person's decision. `agent-ledger resolve` decides calls in flight, not these; except
// a call left in flight that the pause asks about: a decision recorded on its attempt is
// one the adapter's resume applies, so the person on call can decide it too.
function pauseText(pause: AwaitingDecisionView): string {
  const crashed = pause.calls.filter((call) => call.inFlightAttemptId !== undefined).length;
  const them = pause.calls.length === 1 ? "it" : "them";
  const where =
    pause.decideWith === undefined
      ? "in the app that runs the agent"
      : `with ${preview(pause.decideWith, 200)}`;
  const calls = pause.calls.map(callText).join(", ");
  if (crashed === 0)
    return `paused at an approval: ${calls}; decide ${them} ${where}, not with agent-ledger resolve`;
  const those =
    crashed === pause.calls.length ? them : `the call${crashed === 1 ? "" : "s"} left in flight`;
  return `paused at an approval: ${calls}; decide ${them} ${where}, or decide ${those} with agent-ledger resolve (below) and resume the run without a state`;
}

/**
 * What the list of paused runs is headed with (inspect and the viewer): who decides them where,
 * and, when one asks about a call left in flight, that `resolve` decides that call too.
 */
export function pausedHeading(paused: readonly PausedRun[]): string {
  const runs = counted(paused.length, "run");
  const crash = paused.some((run) => run.inFlight)
    ? `, or with agent-ledger resolve for a call ${LEFT_IN_FLIGHT}`
    : "";
  return `⏸ ${runs} paused at an approval, waiting for a person to decide in the app that runs the agent${crash}`;
}

/** Every run of the inspection paused awaiting a decision, in tree order. */
export function pausedRuns(runs: readonly RunView[]): PausedRun[] {
  const paused: PausedRun[] = [];
  for (const { run } of runsInTreeOrder(runs))
    if (run.awaitingDecision !== undefined)
      paused.push({
        runId: run.runId,
        text: pauseText(run.awaitingDecision),
        ...(run.awaitingDecision.calls.some((call) => call.inFlightAttemptId !== undefined)
          ? { inFlight: true as const }
          : {}),
      });
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

/**
 * The paused run each run waits with as inspect and the viewer show it: pausedAbove, less the
 * runs a crash left under a pause (inFlightAtPauses' `crashRuns`): made inside a call in flight
 * at the crash, they wait on no decision of an app but crashed with that call, and read as
 * recorded (RUNNING), their calls in flight unresolved. A paused run itself stays paused: its
 * checkpoint is what asks.
 */
export function waitingWithPause(runs: readonly RunView[]): Map<string, string> {
  const above = pausedAbove(runs);
  for (const runId of inFlightAtPauses(runs).crashRuns)
    if (above.get(runId) !== runId) above.delete(runId);
  return above;
}

/**
 * The calls a crash left in flight that a paused run asks about as approvals
 * (`AwaitedCallView.inFlightAttemptId`), by attemptKey (run and attempt), each with the paused
 * run; and the runs (`crashRuns`) whose calls the pause does not keep open: those made inside
 * such a call (an agent tool call's), or every run of the paused tree when the pause asks about
 * nothing else (it is then a crash's pause whole: an agent call open in it waits on the call in
 * flight inside it, not on an app's decision). Those calls are decided as any call lost in a
 * crash, with `agent-ledger resolve`.
 */
export function inFlightAtPauses(runs: readonly RunView[]): {
  attempts: Map<string, string>;
  crashRuns: Set<string>;
} {
  const attempts = new Map<string, string>();
  const crashRuns = new Set<string>();
  for (const { run: paused } of runsInTreeOrder(runs)) {
    const calls = paused.awaitingDecision?.calls ?? [];
    const ids = new Set(calls.flatMap((call) => call.inFlightAttemptId ?? []));
    if (ids.size === 0) continue;
    const wholeTree = calls.every((call) => call.inFlightAttemptId !== undefined);
    // requestEventIds of the attempts in flight, whose child runs are made inside them.
    const requests = new Set<string>();
    // A parent comes first in tree order: a run under one made inside such a call is too.
    for (const { run, parent } of runsInTreeOrder([paused])) {
      if (
        wholeTree ||
        (parent !== undefined && crashRuns.has(parent.runId)) ||
        (run.causedByEventId !== undefined && requests.has(run.causedByEventId))
      )
        crashRuns.add(run.runId);
      for (const step of run.steps)
        for (const attempt of step.attempts)
          if (attempt.status === "requested" && ids.has(attempt.attemptId)) {
            attempts.set(attemptKey(attempt), paused.runId);
            requests.add(attempt.requestEventId);
          }
    }
  }
  return { attempts, crashRuns };
}

/** `inspect --json` and the viewer: the inspection with `paused` when a run is. */
export function withPausedRuns<T extends SessionInspection>(
  inspection: T,
): T & { paused?: PausedRun[] } {
  const paused = pausedRuns(inspection.runs);
  return paused.length === 0 ? inspection : { ...inspection, paused };
}
