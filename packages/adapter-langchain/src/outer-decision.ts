import {
  type Attempt,
  attemptFromRecorded,
  type JsonObject,
  LedgerError,
  type SessionRecorder,
} from "@agent-ledger/core";
import { retryLive } from "./model-retry.js";
import type { ToolAttempt } from "./tool-attempt.js";

/**
 * A person's decision on a tool call covers the calls made inside it (nested calls, at any
 * depth), recorded inside an attempt of its step: they are part of what the call did.
 *
 * Abandoned, the call is not run again, so neither is anything made inside it: those still
 * unresolved (in flight at the crash) are abandoned too, with the person's reason, rather than
 * stay listed as unresolved for good. The calls recorded inside it are found among the calls the
 * resumed run has not met yet (they cannot be met any more: the call that makes them does not
 * run), at any depth: one made inside a call made inside it, and so on.
 */
export async function abandonCallsInside(
  recorder: SessionRecorder,
  outer: Attempt,
  reason: string,
): Promise<void> {
  const replay = recorder.replay;
  if (!replay) return;
  const notMet = replay.unmatchedTools();
  // A call a sub-agent's model asked for (an agent run inside the tool, on the same handler) is
  // caused by that model's completion, whose call is caused by the tool's request: the step a
  // model completion's call was made inside, by its eventId.
  const modelCalls = replay.modelAttempts;
  const modelCauses = new Map<string, string>();
  for (const model of modelCalls) {
    const cause = model.requested.causedByEventId;
    if (model.outcome !== undefined && cause !== undefined)
      modelCauses.set(model.outcome.eventId, cause);
  }
  const toolStep = (eventId: string | undefined) =>
    eventId === undefined ? undefined : replay.toolStepOf(eventId);
  const stepOf = (cause: string | undefined) =>
    toolStep(cause) ?? toolStep(cause === undefined ? undefined : modelCauses.get(cause));
  // Its sub-agent's model calls too: one in flight would stay unresolved for good.
  const recordedCalls = [...notMet, ...modelCalls];
  // The step each call was made inside (its cause is the request of an attempt of that step).
  const stepOutside = new Map<string, string>();
  for (const recorded of recordedCalls) {
    const step = stepOf(recorded.requested.causedByEventId);
    if (step !== undefined) stepOutside.set(recorded.stepId, step);
  }
  const inside = (stepId: string) => {
    const seen = new Set<string>();
    for (let step = stepOutside.get(stepId); step !== undefined && !seen.has(step); ) {
      if (step === outer.stepId) return true;
      seen.add(step);
      step = stepOutside.get(step);
    }
    return false;
  };
  const why = `made inside ${outer.name ?? "a tool"}'s call, which was abandoned: ${reason}`;
  for (const recorded of recordedCalls)
    if (recorded.status === "requested" && inside(recorded.stepId))
      await recorder.abandon(attemptFromRecorded(recorded), why);
}

/**
 * Approved, the call runs again, as a whole: a call made inside it that the ledger would not
 * run again (not idempotent, in flight at the crash or already done) runs again too, as a new
 * attempt of its recorded one. One in flight is first approved in the ledger (`attempt.approved`),
 * so that the ledger says why it ran again; a call a person abandoned stays abandoned.
 */
export async function runAgainInside(
  recorder: SessionRecorder,
  recorded: Attempt,
  metadata: JsonObject,
): Promise<Attempt> {
  if (!recorded.replayed)
    await recorder.approve(recorded, "made inside a tool call a person approved to run again");
  return retryLive(recorder, recorded, metadata);
}

/**
 * A tool call's request (`request`, as `requestToolCall` records it) when it runs inside a tool
 * call a person approved to run again (`approvedOuter`, at any depth; a call the tool makes
 * itself, or one its sub-agent's model asks for): the approval covers what the call did, so a
 * call the ledger would refuse or answer runs again too (`runAgainInside`), except one a person
 * abandoned, and a new one is `approved`, so that the calls made inside it run again as well.
 */
export async function requestInsideDecision(
  recorder: SessionRecorder,
  metadata: JsonObject,
  approvedOuter: boolean,
  request: () => Promise<ToolAttempt>,
): Promise<ToolAttempt> {
  if (!approvedOuter) return request();
  let requested: ToolAttempt;
  try {
    requested = await request();
  } catch (error) {
    if (!LedgerError.isInstance(error, "unresolved-attempt")) throw error;
    return { attempt: await runAgainInside(recorder, error.attempt, metadata), approved: true };
  }
  const replayed = requested.attempt.replayed;
  if (replayed?.status === "abandoned") return requested;
  const attempt = replayed
    ? await runAgainInside(recorder, requested.attempt, metadata)
    : requested.attempt;
  return { attempt, approved: true };
}
