import type { AttemptView } from "@agent-ledger/core";
import { preview } from "./format.js";

// What `inspect` and the viewer say of an unresolved call the next resume makes again by itself
// (next step `none`), of one a person approved for a re-run, and under the `resolve` command of
// one a person decides: one place for the words, which the viewer's server sends the page
// (page-inspection.ts).

/** "approved for a re-run by jane at <time>: "reason"" (who and why when recorded). */
export function approvalText(attempt: AttemptView): string {
  const by = attempt.approvedBy === undefined ? "" : ` by ${attempt.approvedBy}`;
  const reason = preview(attempt.approvalReason ?? "", 80);
  return `approved for a re-run${by} at ${attempt.approvedAt}${reason ? `: "${reason}"` : ""}`;
}

/** Why no resume makes a call again whose refusal was saved as its result (core's REFUSAL_SAVED_TYPE). */
export const refusalSavedText =
  "its refusal on an earlier resume was saved in the agent's state as the call's result (a tool node turned it into the call's answer), and the step that would make it again is over";

/** Under an approved call in the list of unresolved ones: the approval, and what it does. */
export function approvalLine(attempt: AttemptView): string {
  // Its refusal saved as its result (core's REFUSAL_SAVED_TYPE): the step that would make it
  // again is over, and the resume refuses the model call that would read that result instead.
  if (attempt.refusalSaved === true)
    return `${approvalText(attempt)}; but no resume makes the call again: ${refusalSavedText}`;
  return `${approvalText(attempt)}; the next resume makes the call again`;
}

/** Why there is nothing to decide about a call the next resume makes again by itself. */
export function madeAgainText(attempt: AttemptView): string {
  if (attempt.kind === "model")
    return "nothing to decide; the next resume makes this model call again by itself";
  // The approval line above it says who approved it and that the next resume makes it again
  // (a call whose refusal was saved as its result is never made again: it is to decide).
  if (attempt.approvedAt !== undefined) return "nothing to decide";
  return attempt.effectInChildRuns
    ? "nothing to decide; its child run records every call it makes, so the next resume makes this call again by itself"
    : "nothing to decide; idempotent, so the next resume makes this call again by itself";
}

/**
 * Whether a call a person decides is one only because what its agent did may not all be in the
 * ledger: declared idempotent, its effect that of its child runs (`effectInChildRuns`), none of
 * which says it records every call (core's `madeAgainByItself`). A call declared not idempotent
 * is a decision for that alone, whatever its child runs say.
 */
export function agentCallUnseen(attempt: AttemptView): boolean {
  const effect = attempt.effect as { idempotent?: unknown } | undefined;
  return attempt.effectInChildRuns === true && effect?.idempotent === true;
}

// Under each printed `resolve` command: what its text does, and the other decision. A handoff
// (a tool call whose request's metadata names the agent it hands off to: `handoffTo`) has no
// result for the model: abandoned, it hands off without running its callback again.
export function resolveHint(attempt: AttemptView): string {
  if (attempt.refusalSaved === true)
    return `replace "reason" with what you found: ${refusalSavedText}, so --approve would not make it again either; abandon it, then replace that saved result with your reason in the agent's state so that its model reads your reason rather than the refusal (LangGraph: graph.updateState with a ToolMessage of the same id; the resume's refusal says how); if the call must still happen, say so in the reason: the model may ask for it again`;
  return attempt.handoffTo === undefined
    ? 'replace "reason" with what you found: the agent\'s model reads it word for word in the call\'s result; if the call did not take effect, --approve "reason" instead makes it again on the next resume'
    : `replace "reason" with what you found: this call hands off to ${attempt.handoffTo}, and the model never sees the reason: abandoned, the handoff goes ahead without its callback running again; if the callback did not take effect, --approve "reason" instead runs it once more on the next resume`;
}
