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

/** Under an approved call in the list of unresolved ones: the approval, and what it does. */
export function approvalLine(attempt: AttemptView): string {
  return `${approvalText(attempt)}; the next resume makes the call again`;
}

/** Why there is nothing to decide about a call the next resume makes again by itself. */
export function madeAgainText(attempt: AttemptView): string {
  if (attempt.kind === "model")
    return "nothing to decide; the next resume makes this model call again by itself";
  // The approval line above it says who approved it and that the next resume makes it again.
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
  return attempt.handoffTo === undefined
    ? 'replace "reason" with what you found: the agent\'s model reads it word for word in the call\'s result; if the call did not take effect, --approve "reason" instead makes it again on the next resume'
    : `replace "reason" with what you found: this call hands off to ${attempt.handoffTo}, and the model never sees the reason: abandoned, the handoff goes ahead without its callback running again; if the callback did not take effect, --approve "reason" instead runs it once more on the next resume`;
}
