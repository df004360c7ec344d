import {
  type AttemptView,
  type RunView,
  redactUrl,
  runsInTreeOrder,
  type SessionInspection,
  type TokenUsage,
} from "@agent-ledger/core";
import { attemptKey } from "./attempt-key.js";
import { counted, formatDuration, preview, shellQuote, terminalLine } from "./format.js";
import { interruptText } from "./interrupt-outcome.js";
import {
  agentCallUnseen,
  approvalLine,
  approvalText,
  madeAgainText,
  resolveHint,
} from "./made-again-text.js";
import { type NextStep, nextSteps } from "./next-steps.js";
import { openRuns, openRunsHeading } from "./open-runs.js";
import { LEFT_IN_FLIGHT, pausedHeading, pausedRuns, waitingWithPause } from "./paused-runs.js";
import { settledWithOuterText } from "./settled-with-outer.js";
import { nothingRecordedText, unrecordedInsideText } from "./unrecorded-agent-calls.js";

export interface RenderInspectionOptions {
  /**
   * Store URL to put in the printed `resolve` hint (omitted when not given); a password in it
   * is shown as `***`.
   */
  storeUrl?: string;
}

/**
 * "1200 in / 85 out tokens" (cache reads among the input said: "(300 cached)"): what the calls
 * reported, empty when nothing.
 */
export function tokensText(usage: TokenUsage | undefined): string {
  if (usage === undefined) return "";
  const parts: string[] = [];
  if (usage.inputTokens !== undefined)
    parts.push(
      `${usage.inputTokens} in${usage.cachedTokens ? ` (${usage.cachedTokens} cached)` : ""}`,
    );
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} out`);
  return parts.length > 0 ? `${parts.join(" / ")} tokens` : "";
}

function attemptLabel(attempt: AttemptView): string {
  if (attempt.kind === "model") return `model ${attempt.name ?? "(unknown model)"}`;
  return `tool ${attempt.name ?? "(unnamed)"}${attempt.toolCallId ? ` [${attempt.toolCallId}]` : ""}`;
}

function effectText(effect: unknown): string {
  if (typeof effect !== "object" || effect === null) return "";
  const { kind, idempotent } = effect as { kind?: unknown; idempotent?: unknown };
  return ` effect=${String(kind ?? "unknown")}${idempotent === true ? ",idempotent" : ",not idempotent"}`;
}

/**
 * The calls the tree marks: those in flight with no outcome (`unresolved`), and those a run
 * paused awaiting a decision keeps open (`waiting`, by attemptKey, with the paused run), which
 * are not lost in a crash: they go on when that run does.
 */
interface Marked {
  unresolved: Set<string>;
  waiting: Map<string, string>;
}

function attemptLine(attempt: AttemptView, marked: Marked): string {
  const parts = [attemptLabel(attempt)];
  const pausedRun = marked.waiting.get(attemptKey(attempt));
  if (pausedRun !== undefined) {
    parts.push(
      `⏸ WAITING ON A DECISION (requested ${attempt.requestedAt}; goes on when run ${pausedRun} does)${effectText(attempt.effect)}`,
    );
  } else if (marked.unresolved.has(attemptKey(attempt))) {
    parts.push(
      `!! UNRESOLVED (requested ${attempt.requestedAt}, no outcome recorded)${effectText(attempt.effect)}`,
    );
    // Approved, it is still unresolved until the next resume makes the call again.
    if (attempt.approvedAt !== undefined) parts.push(approvalText(attempt));
  } else if (attempt.status === "requested") {
    parts.push(`retried by ${attempt.retriedBy ?? "?"}`);
  } else {
    // A LangGraph interrupt() is recorded as a failure (replay reads it so); said as a pause.
    const paused = attempt.status === "failed" ? interruptText(attempt.outcome) : undefined;
    parts.push(paused ?? attempt.status);
    if (attempt.durationMs !== undefined) parts.push(durationText(attempt));
    const tokens = tokensText(attempt.usage);
    if (tokens) parts.push(tokens);
    if (attempt.status !== "completed" && paused === undefined) {
      const outcome = preview(
        typeof attempt.outcome === "object" &&
          attempt.outcome !== null &&
          "message" in attempt.outcome
          ? (attempt.outcome as { message: unknown }).message
          : attempt.outcome,
      );
      if (outcome) parts.push(`"${outcome}"`);
      const codes = errorCodesText(attempt.outcome);
      if (codes) parts.push(codes);
    }
  }
  if (attempt.retryOf) parts.push(`(retry of ${attempt.retryOf})`);
  parts.push(`attempt ${attempt.attemptId}`);
  return parts.join("  ");
}

/**
 * The code and HTTP status a recorded error keeps (`(code ECONNRESET)`, `(code 429, status
 * 429)`): what a person branches on (retry later, fix the key), which the message may not say.
 */
function errorCodesText(outcome: unknown): string | undefined {
  if (typeof outcome !== "object" || outcome === null) return undefined;
  const { code, status } = outcome as { code?: unknown; status?: unknown };
  const parts: string[] = [];
  if (typeof code === "string" || typeof code === "number") parts.push(`code ${preview(code, 40)}`);
  if (typeof status === "number") parts.push(`status ${status}`);
  return parts.length > 0 ? `(${parts.join(", ")})` : undefined;
}

/**
 * An ended call's duration: its runtime, but for an abandoned call the time from its request to
 * the abandonment, which a person or a resume decided, maybe hours after a crash: "abandoned
 * 12.2 s" read as a call that ran 12.2 s; a call declined before it started (`declined`) did not
 * run at all. The viewer's tree says it so too (run-tree.js).
 */
function durationText(attempt: AttemptView): string {
  if (attempt.declined) return "declined before it ran";
  const duration = formatDuration(attempt.durationMs);
  return attempt.status === "abandoned" ? `${duration} after it was requested` : duration;
}

// `pausedRunOf`: waitingWithPause, the paused run each run waits with.
function runLine(run: RunView, pausedRunOf: ReadonlyMap<string, string>): string {
  const actor = run.actor ? `${run.actor.id}` : "run";
  // A running run paused until a person decides is not doing anything, nor is a run under it
  // (its agent is the one waiting): said so, as the viewer says it.
  const status = run.status === "running" && pausedRunOf.has(run.runId) ? "paused" : run.status;
  const parts = [`${actor} (${run.runId})`, status.toUpperCase()];
  if (run.durationMs !== undefined) parts.push(formatDuration(run.durationMs));
  else parts.push(`started ${run.startedAt}`);
  parts.push(`${run.length} events`);
  const tokens = tokensText(run.usage);
  if (tokens) parts.push(tokens);
  if (run.actor?.framework) parts.push(`[${run.actor.framework}]`);
  return parts.join("  ");
}

/**
 * What `inspect` says of a run whose seqs have a gap (`RunView.seqGap`: rows deleted, or read
 * out of order), in its parts: `what` is missing, and the `command` that verifies its session
 * (naming the store as the printed `resolve` commands do). Undefined for a run without one.
 */
export function notIntactParts(
  run: Pick<RunView, "seqGap">,
  sessionId: string,
  options: RenderInspectionOptions = {},
): { what: string; command: string } | undefined {
  const gap = run.seqGap;
  if (gap === undefined) return undefined;
  const first = gap.after + 1;
  const what =
    gap.next <= gap.after
      ? `seq ${gap.next} comes again after seq ${gap.after}`
      : gap.next === first + 1
        ? `seq ${first} is missing`
        : `seqs ${first}-${gap.next - 1} are missing`;
  const store = options.storeUrl ? ` --store ${shellQuote(redactUrl(options.storeUrl))}` : "";
  // Options first: an id that starts with "-" is read as one unless it comes after `--`.
  const session = `${sessionId.startsWith("-") ? "-- " : ""}${shellQuote(sessionId)}`;
  return { what, command: `agent-ledger verify${store} ${session}` };
}

/**
 * `notIntactParts` as `inspect` prints it. What the tree shows of such a run (its status, its
 * calls in flight) is not what was recorded: nobody should decide from it.
 */
export function notIntactText(
  run: Pick<RunView, "runId" | "seqGap">,
  sessionId: string,
  options: RenderInspectionOptions = {},
): string | undefined {
  const parts = notIntactParts(run, sessionId, options);
  return parts && `run ${run.runId} is not intact (${parts.what}): run ${parts.command}`;
}

/**
 * The run tree of `agent-ledger inspect`: each run with its status and duration, its steps
 * and attempts (retries under their step), child runs under the attempt that caused them,
 * unresolved attempts marked `!! UNRESOLVED` and listed again at the end with the command
 * that resolves them. A call a paused run keeps open is marked as waiting on a decision, listed
 * under that run's pause and not counted as unresolved, as the viewer shows it.
 */
export function renderInspection(
  inspection: SessionInspection,
  options: RenderInspectionOptions = {},
): string {
  return `${Array.from(inspectionLines(inspection, options), terminalLine).join("\n")}\n`;
}

/** What a run shows under its own line, in order. */
type Item =
  | { kind: "attempt"; attempt: AttemptView; retry: boolean }
  | { kind: "run"; run: RunView; cause?: string; calledBy?: AttemptView }
  | { kind: "paused"; text: string }
  | { kind: "not-intact"; text: string }
  | { kind: "unrecorded"; text: string }
  | { kind: "ended"; text: string };

/** What is left to print of the tree: a run (its line and all under it), or a line. */
type Pending =
  | {
      kind: "run";
      run: RunView;
      prefix: string;
      last: boolean;
      cause?: string;
      calledBy?: AttemptView;
    }
  | { kind: "attempt"; branch: string; attempt: AttemptView; retry: boolean }
  | { kind: "line"; text: string };

/**
 * The lines of `renderInspection`, one at a time and before `terminalLine`: `inspect` writes
 * them as they come. The tree is walked with a stack of its own: a chain of child runs of any
 * depth fits (a call per child run overflowed the stack at about 2,000).
 */
export function* inspectionLines(
  inspection: SessionInspection,
  options: RenderInspectionOptions = {},
): Generator<string, void, undefined> {
  const steps = nextSteps(inspection, options);
  const marked: Marked = { unresolved: new Set(), waiting: new Map() };
  // Each unresolved attempt with its next step: those still to settle, and those a pause keeps.
  const open: { attempt: AttemptView; step: NextStep | undefined }[] = [];
  const waiting: { attempt: AttemptView; runId: string }[] = [];
  inspection.unresolved.forEach((attempt, index) => {
    const step = steps[index];
    if (step?.action === "awaiting-decision") {
      marked.waiting.set(attemptKey(attempt), step.runId);
      waiting.push({ attempt, runId: step.runId });
    } else {
      marked.unresolved.add(attemptKey(attempt));
      open.push({ attempt, step });
    }
  });
  const runCount = runsInTreeOrder(inspection.runs).length;
  const paused = pausedRuns(inspection.runs);
  const pausedText = new Map(paused.map((run) => [run.runId, run.text]));
  const pausedRunOf = waitingWithPause(inspection.runs);
  yield `session ${inspection.sessionId}  ${counted(inspection.eventCount, "event")}  ${counted(runCount, "run")}  ${open.length} unresolved${paused.length > 0 ? `  ${paused.length} paused at an approval` : ""}${inspection.usage ? `  ${tokensText(inspection.usage)}` : ""}`;

  // Last first: what is printed next is at the top of the stack.
  const pending: Pending[] = [];
  for (let index = inspection.runs.length - 1; index >= 0; index--) {
    const run = inspection.runs[index] as RunView;
    pending.push({ kind: "run", run, prefix: "", last: index === inspection.runs.length - 1 });
  }
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.kind === "line") {
      yield next.text;
      continue;
    }
    if (next.kind === "attempt") {
      yield `${next.branch}${next.retry ? "↻ " : ""}${attemptLine(next.attempt, marked)}`;
      continue;
    }
    const { run, prefix, last, cause, calledBy } = next;
    yield `${prefix}${last ? "└─ " : "├─ "}${runLine(run, pausedRunOf)}${cause ? `  caused by ${cause}` : ""}`;
    const inner = prefix + (last ? "   " : "│  ");
    const items: Item[] = [];
    // First, before anything read from the run: what follows is not what was recorded.
    const notIntact = notIntactText(run, inspection.sessionId, options);
    if (notIntact !== undefined) items.push({ kind: "not-intact", text: notIntact });
    const unrecorded = unrecordedInsideText(run, calledBy);
    if (unrecorded !== undefined) items.push({ kind: "unrecorded", text: unrecorded });
    // Children by the event that caused them, looked up once per attempt: a scan of every
    // child for every attempt was quadratic (20,000 tool calls that each started a sub-agent).
    const byCause = new Map<string, RunView[]>();
    for (const child of run.children) {
      const cause = child.causedByEventId;
      if (cause === undefined) continue;
      const caused = byCause.get(cause);
      if (caused === undefined) byCause.set(cause, [child]);
      else caused.push(child);
    }
    const placed = new Set<RunView>();
    for (const step of run.steps) {
      // A call made again goes on on the child run its first attempt opened: a retry with no
      // child run of its own is no sign that its agent recorded nothing.
      const stepHasChild = step.attempts.some((attempt) => byCause.has(attempt.requestEventId));
      step.attempts.forEach((attempt, index) => {
        items.push({ kind: "attempt", attempt, retry: index > 0 });
        const caused = byCause.get(attempt.requestEventId);
        if (caused === undefined) {
          // An agent's call that ended with no child run: its agent recorded nothing at all.
          const nothing = nothingRecordedText(attempt, stepHasChild);
          if (nothing !== undefined) items.push({ kind: "unrecorded", text: nothing });
          return;
        }
        byCause.delete(attempt.requestEventId);
        // In the order they started, as the viewer places them (the reverse order was a
        // leftover of a backward scan).
        for (const child of caused) {
          items.push({
            kind: "run",
            run: child,
            cause: `${attemptLabel(attempt)} (attempt ${attempt.attemptId})`,
            calledBy: attempt,
          });
          placed.add(child);
        }
      });
    }
    for (const child of run.children)
      if (!placed.has(child)) items.push({ kind: "run", run: child });
    const pause = pausedText.get(run.runId);
    if (pause !== undefined) items.push({ kind: "paused", text: pause });
    // Last under the run, how a run that did not complete ended: a branch of the run's own, as
    // a line under the last call's it read as that call's outcome ("cancelled" under a tool
    // that had completed).
    if (run.status !== "running" && run.status !== "completed" && run.result !== undefined)
      items.push({
        kind: "ended",
        text: `run ${run.status}: ${preview(resultText(run.result), 100)}`,
      });
    for (let index = items.length - 1; index >= 0; index--) {
      const item = items[index] as Item;
      const isLast = index === items.length - 1;
      const branch = `${inner}${isLast ? "└─ " : "├─ "}`;
      if (item.kind === "run")
        pending.push({
          kind: "run",
          run: item.run,
          prefix: inner,
          last: isLast,
          cause: item.cause,
          calledBy: item.calledBy,
        });
      else if (item.kind === "paused")
        pending.push({ kind: "line", text: `${branch}⏸ ${item.text}` });
      else if (item.kind === "not-intact" || item.kind === "unrecorded")
        pending.push({ kind: "line", text: `${branch}!! ${item.text}` });
      else if (item.kind === "ended") pending.push({ kind: "line", text: `${branch}${item.text}` });
      else pending.push({ kind: "attempt", branch, attempt: item.attempt, retry: item.retry });
    }
  }

  if (paused.length > 0) {
    yield "";
    yield `${pausedHeading(paused)}:`;
    for (const run of paused) {
      yield `   run ${run.runId}: ${run.text}`;
      // The calls its pause keeps open: not lost in a crash, and not for `resolve`.
      for (const { attempt, runId } of waiting) {
        if (runId !== run.runId) continue;
        yield `     open while it waits (not lost in a crash): ${attemptLabel(attempt)}  run ${attempt.runId} seq ${attempt.requestSeq}  attempt ${attempt.attemptId}`;
        yield `       ${nextStepText({ action: "awaiting-decision", runId }, attempt)}`;
      }
    }
  }

  // Open with nothing in flight: said so, or a run whose process died reads as one at work.
  const stillOpen = openRuns(inspection);
  if (stillOpen.length > 0) {
    yield "";
    yield `${openRunsHeading(stillOpen)}:`;
    for (const run of stillOpen) yield `   run ${run.runId}: ${run.text}`;
  }

  if (open.length > 0) {
    yield "";
    yield `!! ${counted(open.length, "UNRESOLVED attempt")}: requested, never completed, failed or abandoned (in flight, or left so by a crash or by its caller stopping it):`;
    for (const { attempt, step } of open) {
      yield `   ${attemptLabel(attempt)}  run ${attempt.runId} seq ${attempt.requestSeq}  attempt ${attempt.attemptId}${effectText(attempt.effect)}`;
      yield `     request: ${preview(attempt.request, 100)}`;
      if (attempt.approvedAt !== undefined) yield `     ${approvalLine(attempt)}`;
      if (step !== undefined) yield `     ${nextStepText(step, attempt)}`;
      if (step?.action === "resolve") yield `       ${resolveHint(attempt)}`;
    }
    if (steps.some((step) => "passwordLeftOut" in step && step.passwordLeftOut))
      yield "   (the store URL's password is left out, shown as ***: put it back, or set AGENT_LEDGER_STORE to the URL and drop --store)";
  }
}

/**
 * What to do about one unresolved attempt (nextSteps), under it: every call a person must decide
 * gets its own command, as in `inspect --json` and the viewer.
 */
function nextStepText(step: NextStep, attempt: AttemptView): string {
  switch (step.action) {
    case "check-by-hand":
      return `run ${attempt.runId} is ${step.runStatus}: it takes no more events and will not be resumed; check the effect by hand`;
    case "none":
      return `next: ${madeAgainText(attempt)}`;
    case "decide-inner-first":
      return "next: decide the unresolved call inside its child run first; this call waits on it";
    case "decide-outer-first":
      return `next: decide first the agent's call this call was made inside (attempt ${step.attemptId} on run ${step.runId}), which is a decision itself and the one the next resume asks about first: abandoned, it abandons this call too; approved, its agent runs again and this call is decided then`;
    case "settled-with-outer":
      return settledWithOuterText(step);
    case "awaiting-decision":
      return `next: nothing to resolve: run ${step.runId} is paused at an approval (above) that this call waits on; decide it in the app that runs the agent`;
    case "resolve":
      if (step.pausedRunId !== undefined)
        return `next: it was ${LEFT_IN_FLIGHT}, and may have had its effect; run ${step.pausedRunId} is paused asking about it as an approval (above). Check the effect, then decide it in the app, or here: ${step.command} (then resume the run without a state: the decision is applied to it)`;
      return agentCallUnseen(attempt)
        ? `next: what its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it: check the effect, then: ${step.command}`
        : `next: check the effect, then: ${step.command}`;
  }
}

function resultText(result: unknown): unknown {
  if (typeof result !== "object" || result === null) return result;
  const { error, reason } = result as { error?: unknown; reason?: unknown };
  if (typeof error === "object" && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    return `${String(name ?? "Error")}: ${String(message ?? "")}`;
  }
  if (typeof reason === "string") return reason;
  return result;
}
