import type { AttemptView } from "@agent-ledger/core";
import { preview } from "./format.js";

// What `inspect` and the viewer say of an unresolved call the next resume makes again by itself
// (next step `none`), and of one a person approved for a re-run: one place for the words, which
// the viewer's server sends the page (page-inspection.ts).

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
