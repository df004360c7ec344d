import { BlobCache, lastListOf, resolveEvents } from "../compact/resolve.js";
import { assertId } from "../events/ids.js";
import type { LedgerEvent } from "../events/types.js";
import { ReplayCursor } from "../replay/replay-cursor.js";
import { readRecordedRun, readWholeRun } from "../store/read-all.js";
import { loadRecordedChildren } from "./child-runs.js";
import { ClosedRunRecords } from "./closed-run-records.js";
import { CommitQueue } from "./commit-queue.js";
import {
  assertOptionsObject,
  type ResumeOptions,
  type SessionRecorderOptions,
} from "./recorder-options.js";
import { heardReadBack, type RecorderState, runEndStatus } from "./recorder-state.js";
import { keepOneList, RunLog, storedSize } from "./run-log.js";

/**
 * `SessionRecorder.resume`'s options checked and parted: those of the recorder it makes, and
 * whether that recorder resolves what it reads (`ResumeOptions`).
 */
export function resumeOptions(options: SessionRecorderOptions & ResumeOptions): {
  recorderOptions: SessionRecorderOptions;
  resolve: boolean;
} {
  assertOptionsObject(options, { resume: true });
  const { resolve, ...rest } = options;
  // Without it the constructor would make a fresh run id and resume would report that
  // invented run as not found, a message about a run the caller never named.
  assertId(rest.runId, "$.runId");
  return { recorderOptions: rest, resolve: resolve !== false };
}

/**
 * Reads the run of `state` from the ledger and continues it (`SessionRecorder.resume`):
 * `not-found` if the ledger does not hold it. `resolve`: see `ResumeOptions`.
 */
export async function resumeRun(state: RecorderState, resolve: boolean): Promise<void> {
  state.resolveOnLoad = resolve;
  await loadRun(state, true);
}

/**
 * Reads the run of `state` and continues it where the ledger ends: a run the ledger does not
 * hold is `not-found` when `required`, else left new (a child of a resumed run that the crashed
 * process had not started). With `keepLog`, the recorder keeps what it read and will commit
 * (`RunLog`), to be reopened without reading it again, unless that is over the log's budget
 * already: its reopen then reads the whole run again, as this one did.
 */
export async function loadRun(
  state: RecorderState,
  required: boolean,
  keepLog = false,
): Promise<void> {
  const { store, sessionId, runId } = state;
  const stored = required
    ? await readRecordedRun(store, { sessionId, runId })
    : await readWholeRun(store, { sessionId, runId });
  if (stored.length === 0) return;
  // What this run already committed: never re-put, and the next request extends its list.
  const cache = new BlobCache();
  for (const event of stored) state.compactor.committed(event.evidenceRefs ?? []);
  const events = state.resolveOnLoad ? await resolveEvents(store, stored, { cache }) : stored;
  // Read as stored (a tool that only decides), nothing is fetched: a request this recorder
  // makes starts a list of its own instead of extending the run's last one.
  const lastList = state.resolveOnLoad ? await lastListOf(store, stored, { cache }) : undefined;
  state.compactor.setLastList(lastList);
  if (keepLog) {
    keepOneList(cache, lastList?.ref);
    state.log = RunLog.keep(events, cache, storedSize(stored));
  }
  adopt(state, events);
  await loadRecordedChildren(state);
}

/**
 * Makes `events` (the whole run, as loaded) what `state` continues: its replay, its open
 * attempts, its end if it has one, and the seq its next append starts at.
 */
export function adopt(state: RecorderState, events: readonly LedgerEvent[]): void {
  const log = state.log;
  state.queue = new CommitQueue({
    store: state.store,
    sessionId: state.sessionId,
    runId: state.runId,
    nextSeq: events.length,
    readBack: (sent, stored) => heardReadBack(state, sent, stored),
    ...(log !== undefined ? { committed: (committed) => log.wrote(committed) } : {}),
  });
  state.replay = new ReplayCursor(events);
  state.started = true;
  state.startedEvent = events.find((event) => event.type === "run.started");
  const last = events[events.length - 1];
  const end = last && runEndStatus(last.type);
  if (end) {
    state.status = end;
    state.recordedEnd = last;
    state.closedRecords = new ClosedRunRecords(events);
  }
  for (const event of events) {
    state.open.read(event);
    if (event.type === "model.completed") state.lastModelCompletion = event.eventId;
  }
  state.children.readRetries(events);
}
