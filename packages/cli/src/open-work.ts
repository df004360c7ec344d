import type { EventStore, SessionInspection, SessionSummary } from "@agent-ledger/core";
import { counted } from "./format.js";
import { inspectForDecision, nextSteps } from "./next-steps.js";
import { openRuns } from "./open-runs.js";
import { pausedRuns } from "./paused-runs.js";
import { sessionHasEvents } from "./store.js";

/**
 * What `inspect` would show a person in a session, counted: attempts it marks unresolved (calls
 * in flight with no outcome: at work, or left so by a crash or by their caller stopping them),
 * runs paused at an approval, and runs open with nothing in flight (inspect cannot tell whether a
 * process still runs them).
 */
export interface OpenWork {
  unresolved: number;
  paused: number;
  openRuns: number;
}

/** A session with something open, as `sessions --unresolved --json` lists it. */
export type SessionWithOpenWork = SessionSummary & OpenWork;

/**
 * The counts of `inspection` as `inspect`'s first line says them: a call a pause keeps open is
 * counted with its paused run, not as unresolved (it was not lost in a crash).
 */
function openWorkOf(inspection: SessionInspection): OpenWork {
  const steps = nextSteps(inspection);
  return {
    unresolved: steps.filter((step) => step.action !== "awaiting-decision").length,
    paused: pausedRuns(inspection.runs).length,
    openRuns: openRuns(inspection).length,
  };
}

/** True when a person would find something to look at: any count above zero. */
function hasOpenWork(work: OpenWork): boolean {
  return work.unresolved + work.paused + work.openRuns > 0;
}

/**
 * The session read whole as `inspect` reads it, with its counts; undefined when it holds no
 * event once read: deleted meanwhile (`prune` or `delete` in another process), so what was read
 * of it may stop part way, with runs left open and calls in flight that were not.
 */
async function sessionOpenWork(
  store: EventStore,
  session: SessionSummary,
): Promise<SessionWithOpenWork | undefined> {
  const inspection = await inspectForDecision(store, session.sessionId);
  if (!(await sessionHasEvents(store, session.sessionId))) return undefined;
  return { ...session, eventCount: inspection.eventCount, ...openWorkOf(inspection) };
}

/**
 * Those of `sessions` (a page of the store's list) with something open, each read whole as
 * `inspect` reads it, one after the other; a session deleted while read is left out.
 */
export async function sessionsWithOpenWork(
  store: EventStore,
  sessions: readonly SessionSummary[],
): Promise<SessionWithOpenWork[]> {
  const open: SessionWithOpenWork[] = [];
  for (const session of sessions) {
    const work = await sessionOpenWork(store, session);
    if (work && hasOpenWork(work)) open.push(work);
  }
  return open;
}

/** "2 unresolved, 1 paused, 1 open run": the non-zero counts, for the sessions table. */
export function openWorkText(work: OpenWork): string {
  const parts: string[] = [];
  if (work.unresolved > 0) parts.push(`${work.unresolved} unresolved`);
  if (work.paused > 0) parts.push(`${work.paused} paused`);
  if (work.openRuns > 0) parts.push(counted(work.openRuns, "open run"));
  return parts.join(", ");
}
