import {
  type AttemptView,
  type EventStore,
  endedOuterCalls,
  inspectSession,
  madeAgainByItself,
  type RunInTree,
  type RunView,
  runsInTreeOrder,
  type SessionInspection,
} from "@agent-ledger/core";
import { attemptKey } from "./attempt-key.js";
import { shellQuote } from "./format.js";
import { type OpenRun, openRuns } from "./open-runs.js";
import { inFlightAtPauses, type PausedRun, pausedAbove, withPausedRuns } from "./paused-runs.js";
import { type SettledWithOuterStep, settledWithOuterStep } from "./settled-with-outer.js";
import { storeOption } from "./store-url.js";

/** What the on-call person does about one unresolved attempt. */
export type NextStep =
  /** Its run is closed: it takes no attempt.abandoned (`resolve` fails with run-closed). */
  | { action: "check-by-hand"; runStatus: RunView["status"] }
  /**
   * The next resume makes it again by itself (core's `madeAgainByItself`): a model call, an
   * approved call, an idempotent tool call, or an agent's call whose child runs record every
   * call.
   */
  | { action: "none" }
  /**
   * An agent's call (Agent.asTool) the next resume makes again by itself (or a person approved),
   * open because a call inside its child run is to decide: decide that.
   */
  | { action: "decide-inner-first" }
  /**
   * Made inside the child runs of an agent's call that is itself to decide (the outermost such
   * call: `attemptId` on run `runId`): the next resume asks about that call first, and only an
   * approval of it runs its agent again, where this call comes up. Abandoned, it settles this
   * call too (`resolve --abandon` settles the calls inside). Decide that call first.
   */
  | { action: "decide-outer-first"; runId: string; attemptId: string }
  /**
   * In the tree of run `runId`, which is paused awaiting a person's decision (listed in
   * `paused`): decided in the app that runs the agent, not with `resolve`.
   */
  | { action: "awaiting-decision"; runId: string }
  /**
   * In flight inside a tool call that ended (abandoned, completed or failed; core's
   * `endedOuterCalls`): settling that call abandons it, so it is not a call to decide.
   */
  | SettledWithOuterStep
  /**
   * Check the effect, then run `command`. `passwordLeftOut`: the store URL had a password (or a
   * credential parameter); the command shows it as `***` (redactUrl), to be put back before
   * it runs. `pausedRunId`: the run (listed in `paused`) is paused asking about this call as an
   * approval, though it was left in flight (by a crash, or by its caller stopping it); decided
   * with `command`, the next resume of that run without a state applies the decision.
   */
  | { action: "resolve"; command: string; passwordLeftOut?: true; pausedRunId?: string };

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
  // Calls in flight at a crash that a pause asks about: decided as any call lost in a crash.
  const inFlight = inFlightAtPauses(inspection.runs);
  // What the resume does with each call, decided as the adapters' resumes decide it.
  const madeAgain = madeAgainByItself(inspection);
  // Calls in flight inside a tool call that ended: settled with it, neither made again nor decided.
  const heldBy = endedOuterCalls(inspection);
  // A call to decide: one the next resume will not make again by itself, on a run still open.
  const toDecide = new Set(
    inspection.unresolved
      .filter(
        (attempt, index) =>
          statuses.get(attempt.runId) === "running" &&
          !madeAgain[index] &&
          heldBy[index] === undefined,
      )
      .map(attemptKey),
  );
  const waitsOnDecision = outerCalls(inspection.runs, toDecide);
  const insideDecision = outerDecisions(inspection.runs, toDecide);
  const { option: store, passwordLeftOut } = storeOption(options.storeUrl);
  // How many unresolved attempts share each attemptId (a fork copies them), counted once:
  // looking through the list for each attempt was quadratic (100,000 in flight: 226 s).
  const sharing = new Map<string, number>();
  for (const attempt of inspection.unresolved)
    sharing.set(attempt.attemptId, (sharing.get(attempt.attemptId) ?? 0) + 1);
  return inspection.unresolved.map((attempt, index): NextStep => {
    const status = statuses.get(attempt.runId);
    if (status !== undefined && status !== "running")
      return { action: "check-by-hand", runStatus: status };
    const key = attemptKey(attempt);
    const pausedRun = paused.get(attempt.runId);
    if (
      pausedRun !== undefined &&
      !inFlight.attempts.has(key) &&
      !inFlight.crashRuns.has(attempt.runId)
    )
      return { action: "awaiting-decision", runId: pausedRun };
    const held = heldBy[index];
    if (held !== undefined)
      return settledWithOuterStep(inspection.sessionId, held, { option: store, passwordLeftOut });
    // An agent call made again by itself (or approved) waits on the calls to decide inside it;
    // one that is itself to decide is decided on its own, first.
    const waits = waitsOnDecision.has(attempt.requestEventId) && !toDecide.has(key);
    // Inside an agent call to decide, what would take a decision waits on that call: the resume
    // asks about the outermost first (its agent runs again only once it is approved), and
    // abandoning it settles the calls inside it. A call made again by itself needs nothing.
    const outer = insideDecision.get(key);
    if (outer !== undefined && (waits || toDecide.has(key)))
      return { action: "decide-outer-first", runId: outer.runId, attemptId: outer.attemptId };
    if (waits) return { action: "decide-inner-first" };
    if (madeAgain[index]) return { action: "none" };
    // After a fork the same attemptId can be unresolved in several runs: name the run.
    const ambiguous = (sharing.get(attempt.attemptId) ?? 0) > 1;
    // `--run=`: parseArgs takes no value starting with "-" after a space.
    const run = ambiguous ? ` --run=${shellQuote(attempt.runId)}` : "";
    const pausedRunId = inFlight.attempts.get(key);
    // Options first, then `--`: an id may start with "-" ("-rf", "--json"), and shell quotes
    // do not stop the parser from reading it as an option.
    return {
      action: "resolve",
      command: `agent-ledger resolve --abandon "reason"${run}${store} -- ${shellQuote(inspection.sessionId)} ${shellQuote(attempt.attemptId)}`,
      ...(passwordLeftOut ? { passwordLeftOut: true as const } : {}),
      ...(pausedRunId === undefined ? {} : { pausedRunId }),
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
 * The inspection with the next step of each unresolved attempt, the runs paused awaiting a
 * decision (`paused`, when there are) and the runs open with nothing in flight (`openRuns`, when
 * there are): `inspect --json`, the viewer.
 */
export function withNextSteps(
  inspection: SessionInspection,
  options: { storeUrl?: string } = {},
): SessionInspection & { nextSteps: NextStep[]; paused?: PausedRun[]; openRuns?: OpenRun[] } {
  const open = openRuns(inspection);
  return withPausedRuns({
    ...inspection,
    nextSteps: nextSteps(inspection, options),
    ...(open.length > 0 ? { openRuns: open } : {}),
  });
}

/**
 * requestEventIds of attempts whose child runs (at any depth) hold one of `attempts`. A child run
 * is started by one attempt of a call, and a retry goes on on that run: every attempt of the
 * call's step counts, or a retry in flight (the first attempt settled by it) was said to have
 * nothing open inside it.
 */
function outerCalls(runs: RunView[], attempts: Set<string>): Set<string> {
  const outer = new Set<string>();
  // The runs with a child whose tree holds one: read backwards, the tree order has every run
  // after the runs under it.
  const openBelow = new Set<RunView>();
  const indexed = new Map<RunView, Map<string, AttemptView[]>>();
  const order = runsInTreeOrder(runs);
  for (let index = order.length - 1; index >= 0; index--) {
    const { run, parent } = order[index] as RunInTree<RunView>;
    const open =
      openBelow.has(run) ||
      run.steps.some((step) => step.attempts.some((attempt) => attempts.has(attemptKey(attempt))));
    if (!open || parent === undefined) continue;
    openBelow.add(parent);
    const cause = run.causedByEventId;
    if (cause === undefined) continue;
    outer.add(cause);
    for (const attempt of stepsByRequest(parent, indexed).get(cause) ?? [])
      outer.add(attempt.requestEventId);
  }
  return outer;
}

// Each attempt's step by its requestEventId, indexed once per run: a run with thousands of
// child runs looked up by a scan of its steps each was quadratic.
function stepsByRequest(
  run: RunView,
  indexed: Map<RunView, Map<string, AttemptView[]>>,
): Map<string, AttemptView[]> {
  let steps = indexed.get(run);
  if (steps === undefined) {
    steps = new Map();
    for (const step of run.steps)
      for (const attempt of step.attempts) steps.set(attempt.requestEventId, step.attempts);
    indexed.set(run, steps);
  }
  return steps;
}

/**
 * The attempt of an agent's call (the attempts of its step) to decide before the calls inside
 * its child runs: none once a person approved the call and it was made again (an attempt of it
 * approved, the one in flight its retry). Its agent ran again then, as far as a call in flight
 * inside it, where the worker stopped: that call is to decide now, or every re-run of the
 * approved call stops there again and inspect asks about the call once more.
 */
function outerToDecide(
  step: AttemptView[] | undefined,
  toDecide: Set<string>,
): AttemptView | undefined {
  if (step === undefined || step.some((attempt) => attempt.approvedAt !== undefined))
    return undefined;
  return step.find((attempt) => toDecide.has(attemptKey(attempt)));
}

/**
 * For each attempt made inside the child runs (at any depth) of a call in `toDecide`: the
 * outermost such call, by attemptKey. A child run is made by one attempt of a call (a retry goes
 * on on the run of the attempt it retries): the call's attempt to decide is found by its step.
 */
function outerDecisions(runs: RunView[], toDecide: Set<string>): Map<string, AttemptView> {
  const inside = new Map<string, AttemptView>();
  // The call to decide each run was made inside, found as its parent is walked (a parent comes
  // first in tree order).
  const outerOf = new Map<RunView, AttemptView>();
  for (const { run } of runsInTreeOrder(runs)) {
    const outer = outerOf.get(run);
    const stepOf = new Map<string, AttemptView[]>();
    for (const step of run.steps)
      for (const attempt of step.attempts) {
        stepOf.set(attempt.requestEventId, step.attempts);
        if (outer !== undefined) inside.set(attemptKey(attempt), outer);
      }
    for (const child of run.children) {
      const cause = child.causedByEventId;
      const step = cause === undefined ? undefined : stepOf.get(cause);
      const childOuter = outer ?? outerToDecide(step, toDecide);
      if (childOuter !== undefined) outerOf.set(child, childOuter);
    }
  }
  return inside;
}

function runStatuses(runs: RunView[]): Map<string, RunView["status"]> {
  const statuses = new Map<string, RunView["status"]>();
  for (const { run } of runsInTreeOrder(runs)) statuses.set(run.runId, run.status);
  return statuses;
}
