import type { LedgerEvent } from "../events/types.js";
import type { SessionRecorder } from "../recorder/session-recorder.js";
import { collectAttempts, type RecordedAttempt } from "../replay/replay-cursor.js";
import { readWholeRun } from "../store/read-all.js";

/**
 * The open child runs of one run, by the tool call that made them. A run made inside a tool
 * call starts caused by the request of one of that call's attempts (a retry adopts the run of
 * the attempt it retries, or starts one of its own), so a call is known by its attempts: each
 * of its runs is found through any of them, and the call's last attempt says how it ended.
 */
export interface RunsByCall {
  /** The last attempt of the tool call one of whose attempts made the request `eventId`. */
  callOf(eventId: string): RecordedAttempt | undefined;
  /** The open child runs of the call whose last attempt is `last`. */
  runsOf(last: RecordedAttempt): readonly string[];
  /** Every call that has open child runs (its last attempt), with them. */
  readonly calls: ReadonlyMap<RecordedAttempt, readonly string[]>;
}

const NONE: RunsByCall = { callOf: () => undefined, runsOf: () => [], calls: new Map() };

/**
 * The last attempt of each tool call of `events` (one run's), by the request event of each of
 * its attempts: a retry names the attempt it retries, and the last is the one no retry names.
 */
export function lastToolAttempts(events: readonly LedgerEvent[]): Map<string, RecordedAttempt> {
  const tools = collectAttempts(events).filter((attempt) => attempt.kind === "tool");
  const retriedBy = new Map<string, RecordedAttempt>();
  for (const attempt of tools)
    if (attempt.retryOf !== undefined) retriedBy.set(attempt.retryOf, attempt);
  const byRequest = new Map<string, RecordedAttempt>();
  for (const attempt of tools) {
    let last = attempt;
    // A retry names the attempt it retries: a chain, which the `seen` set keeps finite.
    for (const seen = new Set<string>(); !seen.has(last.attemptId); ) {
      seen.add(last.attemptId);
      last = retriedBy.get(last.attemptId) ?? last;
    }
    byRequest.set(attempt.requested.eventId, last);
  }
  return byRequest;
}

/**
 * The open child runs of `run`'s run (a resumed recorder, or a child of one: it lists them as
 * they were when its tree was loaded), by call; `events` are the run's. Reads the first event
 * of each open child run (its cause), and nothing when none is open.
 */
export async function openRunsByCall(
  run: SessionRecorder,
  events: readonly LedgerEvent[],
): Promise<RunsByCall> {
  const open = run.recordedChildRuns().filter((child) => child.status === "running");
  if (open.length === 0) return NONE;
  const byRequest = lastToolAttempts(events);
  const calls = new Map<RecordedAttempt, string[]>();
  for (const child of open) {
    const page = await run.store.readRun({
      sessionId: run.sessionId,
      runId: child.runId,
      limit: 1,
    });
    const started = page.events[0];
    const cause = started?.type === "run.started" ? started.causedByEventId : undefined;
    const call = cause === undefined ? undefined : byRequest.get(cause);
    if (call === undefined) continue;
    const runs = calls.get(call);
    if (runs === undefined) calls.set(call, [child.runId]);
    else runs.push(child.runId);
  }
  return {
    callOf: (eventId) => byRequest.get(eventId),
    runsOf: (last) => calls.get(last) ?? [],
    calls,
  };
}

const byRecorder = new WeakMap<SessionRecorder, Promise<RunsByCall>>();

/**
 * `openRunsByCall` for the run of `recorder`, read once per recorder: a resumed agent answers
 * every recorded tool call from the ledger and asks about each, and only a run with open child
 * runs is read at all. Its runs as listed when it was resumed, its events as they were then.
 */
export function runsByCallOf(recorder: SessionRecorder): Promise<RunsByCall> {
  const known = byRecorder.get(recorder);
  if (known !== undefined) return known;
  if (!recorder.recordedChildRuns().some((child) => child.status === "running"))
    return Promise.resolve(NONE);
  const reading = (async () => {
    const { store, sessionId, runId } = recorder;
    return openRunsByCall(recorder, await readWholeRun(store, { sessionId, runId }));
  })();
  byRecorder.set(recorder, reading);
  // A failed read (a store down) is tried again by the next call, not kept.
  reading.catch(() => byRecorder.delete(recorder));
  return reading;
}
