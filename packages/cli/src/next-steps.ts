import {
  type AttemptView,
  type EventStore,
  inspectSession,
  type RunView,
  redactUrl,
  type SessionInspection,
} from "@agent-ledger/core";
import { shellQuote } from "./format.js";
import { pausedAbove, withPausedRuns } from "./paused-runs.js";

/** What the on-call person does about one unresolved attempt. */
export type NextStep =
  /** Its run is closed: it takes no attempt.abandoned (`resolve` fails with run-closed). */
  | { action: "check-by-hand"; runStatus: RunView["status"] }
  /** A model call, an idempotent tool call or an approved one: the next resume makes it again. */
  | { action: "none" }
  /** An agent's call (Agent.asTool) open because a call inside its child run is: decide that. */
  | { action: "decide-inner-first" }
  /**
   * In the tree of run `runId`, which is paused awaiting a person's decision (listed in
   * `paused`): decided in the app that runs the agent, not with `resolve`.
   */
  | { action: "awaiting-decision"; runId: string }
  /**
   * Check the effect, then run `command`. `passwordLeftOut`: the store URL had a password (or a
   * credential parameter); the command shows it as `***` (redactUrl), to be put back before
   * it runs.
   */
  | { action: "resolve"; command: string; passwordLeftOut?: true };

// A fork copies attemptIds into another run: an attempt is named by its run and its id.
export function attemptKey(attempt: AttemptView): string {
  return `${attempt.runId}\n${attempt.attemptId}`;
}

/**
 * The next step for each of `inspection.unresolved` (same order), as `agent-ledger inspect`
 * and the viewer show it. `storeUrl` goes into the printed commands when given, shown as
 * `redactUrl` shows it (a password as `***`): a command on a screen, in a web page or in a
 * ticket must not carry one.
 */
export function nextSteps(
  inspection: SessionInspection,
  options: { storeUrl?: string } = {},
): NextStep[] {
  const statuses = runStatuses(inspection.runs);
  const paused = pausedAbove(inspection.runs);
  // A call to decide: one the next resume will not make again by itself, on a run still open.
  const toDecide = new Set(
    inspection.unresolved
      .filter((attempt) => statuses.get(attempt.runId) === "running" && needsDecision(attempt))
      .map(attemptKey),
  );
  const waitsOnDecision = outerCalls(inspection.runs, toDecide);
  const shownUrl = options.storeUrl ? redactUrl(options.storeUrl) : undefined;
  const passwordLeftOut = shownUrl !== undefined && shownUrl !== options.storeUrl;
  const store = shownUrl ? ` --store ${shellQuote(shownUrl)}` : "";
  return inspection.unresolved.map((attempt): NextStep => {
    const status = statuses.get(attempt.runId);
    if (status !== undefined && status !== "running")
      return { action: "check-by-hand", runStatus: status };
    const pausedRun = paused.get(attempt.runId);
    if (pausedRun !== undefined) return { action: "awaiting-decision", runId: pausedRun };
    // The innermost call to decide first; an agent call whose inner calls need no decision is
    // decided on its own (an agent tool declared idempotent is made again by itself).
    if (waitsOnDecision.has(attempt.requestEventId)) return { action: "decide-inner-first" };
    if (!needsDecision(attempt)) return { action: "none" };
    // After a fork the same attemptId can be unresolved in several runs: name the run.
    const ambiguous = inspection.unresolved.some(
      (other) => other !== attempt && other.attemptId === attempt.attemptId,
    );
    // `--run=`: parseArgs takes no value starting with "-" after a space.
    const run = ambiguous ? ` --run=${shellQuote(attempt.runId)}` : "";
    // Options first, then `--`: an id may start with "-" ("-rf", "--json"), and shell quotes
    // do not stop the parser from reading it as an option.
    return {
      action: "resolve",
      command: `agent-ledger resolve --abandon "reason"${run}${store} -- ${shellQuote(inspection.sessionId)} ${shellQuote(attempt.attemptId)}`,
      ...(passwordLeftOut ? { passwordLeftOut: true as const } : {}),
    };
  });
}

/**
 * The session as the person on call reads it (`inspect` and the viewer): the content a decision
 * needs put back (`resolve: "in-flight"`), and a lost blob shown as its marker and listed in
 * `missingBlobs`, so it never hides what was in flight.
 */
export function inspectForDecision(
  store: EventStore,
  sessionId: string,
): Promise<SessionInspection> {
  return inspectSession(store, sessionId, { resolve: "in-flight", missingBlobs: "keep" });
}

/**
 * The inspection with the next step of each unresolved attempt, and the runs paused awaiting a
 * decision (`paused`, when there are): `inspect --json`, the viewer.
 */
export function withNextSteps(
  inspection: SessionInspection,
  options: { storeUrl?: string } = {},
): SessionInspection & { nextSteps: NextStep[] } {
  return withPausedRuns({ ...inspection, nextSteps: nextSteps(inspection, options) });
}

/** An unresolved call the next resume will not make again by itself. */
function needsDecision(attempt: AttemptView): boolean {
  if (attempt.kind === "model" || attempt.approvedAt !== undefined) return false;
  const effect = attempt.effect as { idempotent?: unknown } | undefined;
  return effect?.idempotent !== true;
}

/** requestEventIds of attempts whose child runs (at any depth) hold one of `attempts`. */
function outerCalls(runs: RunView[], attempts: Set<string>): Set<string> {
  const outer = new Set<string>();
  const hasOpen = (run: RunView): boolean => {
    let open = run.steps.some((step) =>
      step.attempts.some((attempt) => attempts.has(attemptKey(attempt))),
    );
    for (const child of run.children) {
      if (!hasOpen(child)) continue;
      open = true;
      if (child.causedByEventId !== undefined) outer.add(child.causedByEventId);
    }
    return open;
  };
  for (const run of runs) hasOpen(run);
  return outer;
}

function runStatuses(runs: RunView[], statuses = new Map<string, RunView["status"]>()) {
  for (const run of runs) {
    statuses.set(run.runId, run.status);
    runStatuses(run.children, statuses);
  }
  return statuses;
}
