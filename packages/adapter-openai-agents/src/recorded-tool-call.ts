import {
  type Attempt,
  type JsonObject,
  LedgerError,
  type ReplayedOutcome,
  type SessionRecorder,
  type ToolEffect,
} from "@agent-ledger/core";
import {
  applyContextChange,
  type ContextWatch,
  recordContextChange,
  watchContext,
} from "./context-changes.js";
import { takeApprovedRetry, UNDEFINED_OUTPUT_METADATA } from "./ledger-state.js";
import type { LedgerToolOptions } from "./ledger-tool.js";
import {
  type LedgerRunState,
  type LedgerScope,
  ledgerStep,
  type RecordedToolCall,
  recorderOf,
  refused,
} from "./scope.js";

// What every recorded call of a tool shares, whichever wraps it (ledgerTool's function tools,
// ledgerLocalTool's shells and editors, a handoff): its arguments as recorded, the attempt it
// runs under, the recorder it records on, the run's context around it, what a call answered
// from the ledger returns.

/** A call's arguments as the SDK gives them (a JSON string), as the ledger records them. */
export function parseArgs(input: unknown): unknown {
  if (typeof input !== "string") return input ?? null;
  if (input.length === 0) return {};
  try {
    return JSON.parse(input);
  } catch {
    return { raw: input };
  }
}

/**
 * The attempt a tool call runs under: a retry a person approved, else a new `tool.requested`
 * (committed before the call), answered from the ledger (`replayed`) on a resumed run.
 */
export async function openAttempt(
  recorder: SessionRecorder,
  scope: LedgerScope | undefined,
  call: {
    callId: string | undefined;
    name: string;
    args: unknown;
    effect: ToolEffect;
    metadata: JsonObject | undefined;
  },
): Promise<Attempt> {
  const approved =
    call.callId !== undefined && scope
      ? takeApprovedRetry(scope.run, { callId: call.callId, recorder })
      : undefined;
  if (approved) return approved;
  try {
    return await recorder.beforeToolCall({
      ...(call.callId !== undefined ? { toolCallId: call.callId } : {}),
      name: call.name,
      args: call.args,
      effect: call.effect,
      ...(call.metadata !== undefined ? { metadata: call.metadata } : {}),
    });
  } catch (error) {
    // Unresolved after a crash, but a person already approved running it again.
    const attempt = (error as { attempt?: Attempt }).attempt;
    if (
      LedgerError.isInstance(error, "unresolved-attempt") &&
      attempt &&
      scope?.run.decisions.get(attempt.attemptId) === true
    ) {
      // As its request said it (an agent tool's effect is that of its child run).
      return recorder.retry(
        attempt,
        call.metadata !== undefined ? { metadata: call.metadata } : {},
      );
    }
    throw error;
  }
}

/**
 * Whether the SDK must ask about a call the ledger holds (`recorded`, found by its call id) on a
 * resumed run. One a crash left in flight: not if a person approved making it again (in the app
 * before the process died, or with `agent-ledger resolve --approve`): it runs now, as its retry,
 * like any call of the turn (not through the SDK's approval: going on from an approval, the SDK
 * skips a call whose id a result of an earlier turn answers, with a provider that reuses call
 * ids, and the call would never be made); else unless it is `safeAgain`. One rejected before:
 * yes, so the recorded decision is applied again. One that ran: no, the ledger answers it.
 */
export function recordedCallNeedsApproval(
  run: LedgerRunState | undefined,
  recorded: RecordedToolCall,
  safeAgain: boolean,
): boolean {
  if (recorded.status === "requested")
    return run?.decisions.get(recorded.attemptId) === true ? false : !safeAgain;
  return recorded.status === "abandoned";
}

/**
 * The run's context around one recorded call (a function tool's, an agent tool's, a handoff's,
 * an editor's; see context-changes.ts): watched before the call, refused (the run stops) when it
 * holds a value JSON cannot write, as the SDK could not save it in a RunState either.
 * `answered`: a call the ledger answers does not run, so the context gets what it wrote then.
 * `recordChange`: what the call wrote, recorded before its outcome.
 */
export function callContext(context: unknown): {
  answered(run: LedgerRunState | undefined, attempt: Attempt): void;
  recordChange(recorder: SessionRecorder, attempt: Attempt): Promise<void>;
} {
  let watch: ContextWatch | undefined;
  try {
    watch = watchContext(context);
  } catch (error) {
    throw refused(error);
  }
  return {
    answered(run, attempt) {
      const status = attempt.replayed?.status;
      if (status === "completed" || status === "failed")
        applyContextChange(run, attempt.attemptId, context);
    },
    recordChange: (recorder, attempt) =>
      ledgerStep(() => recordContextChange(recorder, attempt, watch)),
  };
}

/**
 * The recorder a call of tool `name` records on: the tool's own (`{ recorder }`), else the one of
 * the run it is called in. Called outside both, the tool is refused rather than run unrecorded.
 */
export async function toolCallRecorder(
  options: LedgerToolOptions,
  scope: LedgerScope | undefined,
  name: string,
): Promise<SessionRecorder> {
  const recorder =
    options.recorder ?? (scope ? await ledgerStep(() => recorderOf(scope)) : undefined);
  if (!recorder)
    throw new LedgerError(
      "invalid-argument",
      `tool ${name} was called outside runWithLedger/resumeRun and without { recorder }: refusing to run it unrecorded`,
    );
  return recorder;
}

/** What a call answered from the ledger returns again: its result, or nothing if it returned nothing. */
export function replayedOutput(replayed: ReplayedOutcome & { status: "completed" }): unknown {
  return replayed.metadata?.toolOutput === UNDEFINED_OUTPUT_METADATA.toolOutput
    ? undefined
    : replayed.result;
}
