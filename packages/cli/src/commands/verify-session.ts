import {
  type EventStore,
  LedgerError,
  unreadableRunResult,
  type VerifyResult,
  verifyRun,
} from "@agent-ledger/core";
import type { FileCheckStopped } from "@agent-ledger/core/sqlite";
import { sessionRunIds } from "../session-run-ids.js";
import { sessionHasEvents } from "../store.js";

/** A run's result as verify reports it (--json: an element of `runs`, or of `failing`). */
export type RunResult = VerifyResult & { runId: string };

/** What `verifySession` found. */
export interface SessionCheck {
  /** How many of the runs were checked whole. */
  checked: number;
  /** The results of those of them that fail verification, in order. */
  failing: RunResult[];
  /**
   * Set when Ctrl-C stopped it: the run it was checking, whose first `length` events were
   * found sound. Nothing is known of that run's other events nor of the runs after it.
   */
  stopped?: { runId: string; length: number };
  /**
   * Set when the session was deleted while it was verified (`prune` or `delete` in another
   * process): a run then reads as cut short, its blobs as missing, or not at all. The results
   * of its runs say nothing of the ledger, and are not kept.
   */
  gone?: true;
}

/**
 * Verifies the runs `runIds` of session `sessionId` in order, handing each run's result to
 * `onRun` as it is checked (`verify <session>` prints its line then; `--all` its failing runs).
 * Ctrl-C: verifyRun stops before its next page (after a turn of the event loop, for the
 * signal to be seen on SQLite), never answering ok for a run it did not finish.
 */
export async function verifySession(
  store: EventStore,
  sessionId: string,
  runIds: string[],
  signal: AbortSignal | undefined,
  onRun: (result: RunResult) => Promise<void>,
): Promise<SessionCheck> {
  const failing: RunResult[] = [];
  let checked = 0;
  for (const runId of runIds) {
    // A run with an event that cannot be read fails at its seq (verifyRun reads it with readRun).
    let result: VerifyResult;
    try {
      result = await verifyRun(store, { sessionId, runId }, signal ? { signal } : {});
    } catch (error) {
      // A listed run not found: deleted since, with its session, or the store's error stands.
      if (LedgerError.isInstance(error, "not-found") && (await sessionGone(store, sessionId)))
        return { checked, failing: [], gone: true };
      throw error;
    }
    if (result.stopped) return { checked, failing, stopped: { runId, length: result.length } };
    // What deleting the session does to a run as verify reads it is what tampering does:
    // the run is failed only while its session is still there.
    if (!result.ok && (await sessionGone(store, sessionId)))
      return { checked, failing: [], gone: true };
    checked += 1;
    if (!result.ok) failing.push({ runId, ...result });
    await onRun({ runId, ...result });
  }
  return { checked, failing };
}

/**
 * Whether session `sessionId` holds no event now: deleted (a session exists from its first
 * event, and a deletion takes all of them in one transaction, or on Redis one script). A
 * session that cannot be read is not gone: what verify found in it stands.
 */
export async function sessionGone(store: EventStore, sessionId: string): Promise<boolean> {
  try {
    return !(await sessionHasEvents(store, sessionId));
  } catch {
    return false;
  }
}

/**
 * The session's runs, in listRuns' order. A run whose last stored event is no longer an event
 * has no head to list (on SQLite an open run's head is its last event), and listRuns fails for
 * the whole session: then the runs are the ones the session's readable events name, plus the
 * run that error names (in case none of its events can be read), so every run is still
 * verified and reported, that one failing at its seq.
 */
export async function runIdsToVerify(store: EventStore, sessionId: string): Promise<string[]> {
  try {
    return (await store.listRuns(sessionId)).map((run) => run.runId);
  } catch (error) {
    const unreadable = unreadableRunResult(error);
    if (unreadable === undefined) throw error;
    const runIds = await sessionRunIds(store, sessionId);
    return runIds.includes(unreadable.runId) ? runIds : [...runIds, unreadable.runId];
  }
}

/** A run's line, as it is checked. */
export function runLine(result: RunResult): string {
  return result.ok
    ? `ok        run ${result.runId}  ${result.length} events`
    : `TAMPERED  run ${result.runId}  bad seq ${result.badSeq}: ${result.reason}`;
}

/**
 * The store's own check of its file (SQLite: the problems it finds, `stopped` when `signal`
 * stopped it), or undefined for a store without one.
 */
export async function fileProblems(
  store: EventStore,
  signal: AbortSignal | undefined,
): Promise<string[] | "stopped" | undefined> {
  const check = (
    store as {
      fileProblems?: (options: { signal?: AbortSignal }) => Promise<string[] | FileCheckStopped>;
    }
  ).fileProblems;
  if (typeof check !== "function") return undefined;
  const problems = await check.call(store, signal ? { signal } : {});
  return Array.isArray(problems) ? problems : "stopped";
}

/** The line that says SQLite found the file damaged, and what to do. */
export function damagedLine(problems: string[]): string {
  return `DAMAGED   the SQLite file (${problems.length} problem(s), first: ${problems[0]}): its indexes may hide events; restore it from a backup, or recover what is readable (sqlite3 <file> ".recover" | sqlite3 <new file>), before anyone resumes from it`;
}
