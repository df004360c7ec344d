import type { JsonObject } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeSession } from "../store/read-all.js";

/** One `evidence.recorded` record as `latestEvidence` returns it. */
export interface EvidenceView {
  key?: string;
  classification: string;
  summary: string;
  evidenceRefs: string[];
  eventId: string;
  runId: string;
  commitCursor: number;
  recordedAt: string;
  /** eventIds of the earlier records with the same key that this one supersedes (oldest first). */
  supersedes: string[];
}

/**
 * The current evidence of a session (the compact decision ledger): every `evidence.recorded`
 * in commit order, where a later record with the same `key` supersedes the earlier ones (they
 * stay in the log; `supersedes` names them) and records without a key are all kept.
 */
export async function latestEvidence(
  store: EventStore,
  sessionId: string,
): Promise<EvidenceView[]> {
  return latestEvidenceOf(await readWholeSession(store, sessionId));
}

/** `latestEvidence` over events already read (in commit order). */
export function latestEvidenceOf(events: readonly LedgerEvent[]): EvidenceView[] {
  const views: (EvidenceView | undefined)[] = [];
  const byKey = new Map<string, number>();
  for (const event of events) {
    if (event.type !== "evidence.recorded") continue;
    const payload = (event.payload ?? {}) as JsonObject;
    const view: EvidenceView = {
      classification: String(payload.classification ?? ""),
      summary: String(payload.summary ?? ""),
      evidenceRefs: Array.isArray(payload.evidenceRefs)
        ? payload.evidenceRefs.filter((ref): ref is string => typeof ref === "string")
        : [],
      eventId: event.eventId,
      runId: event.runId,
      commitCursor: event.commitCursor,
      recordedAt: event.recordedAt,
      supersedes: [],
    };
    const key = payload.key;
    if (typeof key === "string") {
      view.key = key;
      const previous = byKey.get(key);
      if (previous !== undefined) {
        const earlier = views[previous] as EvidenceView;
        view.supersedes = [...earlier.supersedes, earlier.eventId];
        views[previous] = undefined;
      }
      byKey.set(key, views.length);
    }
    views.push(view);
  }
  return views.filter((view): view is EvidenceView => view !== undefined);
}
