import type { EventStore, SessionInspection } from "@agent-ledger/core";
import { attemptKey } from "./next-steps.js";

/** Who approved re-running an unresolved attempt (`resolve --approve`), when and why. */
export interface Approval {
  at: string;
  by: string;
  reason: string;
}

const PAGE = 1000;

/**
 * The latest `attempt.approved` of each unresolved attempt the inspection says was approved,
 * by `attemptKey`. The inspection carries only `approvedAt`; the person on call also needs to
 * see who decided, and why, before letting the next resume make a non-idempotent call again.
 * Only the runs holding such an attempt are read, from the first such request on.
 */
export async function approvalsOf(
  store: EventStore,
  inspection: SessionInspection,
): Promise<Map<string, Approval>> {
  const approvals = new Map<string, Approval>();
  const fromSeq = new Map<string, number>();
  for (const attempt of inspection.unresolved) {
    if (attempt.approvedAt === undefined) continue;
    const seq = fromSeq.get(attempt.runId);
    fromSeq.set(attempt.runId, Math.min(seq ?? attempt.requestSeq, attempt.requestSeq));
  }
  for (const [runId, first] of fromSeq) {
    for (let seq = first; ; ) {
      const page = await store.readRun({
        sessionId: inspection.sessionId,
        runId,
        fromSeq: seq,
        limit: PAGE,
      });
      for (const event of page.events) {
        if (event.type !== "attempt.approved" || event.attemptId === undefined) continue;
        const payload = event.payload as { reason?: unknown } | null;
        approvals.set(attemptKey({ runId, attemptId: event.attemptId }), {
          at: event.recordedAt,
          by: event.actor?.id ?? "?",
          reason: typeof payload?.reason === "string" ? payload.reason : "",
        });
      }
      const last = page.events[page.events.length - 1];
      if (page.events.length < PAGE || last === undefined) break;
      seq = last.seq + 1;
    }
  }
  return approvals;
}
