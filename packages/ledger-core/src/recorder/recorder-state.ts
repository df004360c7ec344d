import { CanonicalJsonMemo } from "../compact/canonical-memo.js";
import { type CompactOptions, PayloadCompactor } from "../compact/externalize.js";
import { InvalidArgumentError, type LedgerError } from "../events/errors.js";
import { assertId, uuidv7 } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import type { Actor, EventType, LedgerEvent, NewEvent, RunStatus } from "../events/types.js";
import type { ReplayCursor } from "../replay/replay-cursor.js";
import type { EventStore } from "../store/event-store.js";
import { assertEventStore } from "../store/validate.js";
import { validateActor, validateMetadata } from "../store/validate-actor-metadata.js";
import { ChildRuns } from "./child-runs.js";
import type { ClosedRunRecords } from "./closed-run-records.js";
import { CommitQueue } from "./commit-queue.js";
import { OpenAttempts } from "./outcome-guard.js";
import { assertOptionsObject, type SessionRecorderOptions } from "./recorder-options.js";
import { type Redaction, validateRedaction } from "./redact.js";
import type { RunLog } from "./run-log.js";
import { UnsureDeclines } from "./unsure-declines.js";
import { UnsureRequests } from "./unsure-requests.js";

/**
 * What one recorder knows of the run it writes. `SessionRecorder` keeps it private and hands it
 * to the functions of each concept (requests, outcomes, turns, resume, child runs): private
 * `#fields` cannot be shared across files, and making them public on the recorder would make
 * them its API. A class rather than a literal, so every recorder's state has one shape and the
 * per-call functions read it with monomorphic loads.
 */
export class RecorderState {
  readonly store: EventStore;
  readonly sessionId: string;
  readonly runId: string;
  readonly actor: Actor;
  readonly parentRunId: string | undefined;
  readonly causedByEventId: string | undefined;
  readonly redact: Redaction | undefined;
  readonly metadata: JsonObject | undefined;
  readonly compactOption: CompactOptions | false | undefined;
  /** Replaced by `reopen` with the previous recorder's (the refs it committed, its last list). */
  compactor: PayloadCompactor;
  canonical = new CanonicalJsonMemo();
  /** This run's attempts that may still get an outcome (see `OpenAttempts`). */
  readonly open = new OpenAttempts();
  /** Requests whose append's outcome was unknown, and those found stored (see `UnsureRequests`). */
  readonly unsureRequests = new UnsureRequests();
  readonly unsureDeclines = new UnsureDeclines();
  /** Child runs recorded before a crash, and the calls they belong to (see `ChildRuns`). */
  readonly children = new ChildRuns();
  resolveOnLoad = true;
  queue: CommitQueue;
  replay: ReplayCursor | undefined;
  status: RunStatus = "running";
  started = false;
  startedEvent: LedgerEvent | undefined;
  /** The terminal event of a run that was already closed when this recorder loaded it. */
  recordedEnd: LedgerEvent | undefined;
  /** The checkpoints and evidence of that closed run, given back to a loop re-executing it. */
  closedRecords: ClosedRunRecords | undefined;
  lastModelCompletion: string | undefined;
  /** The recorder whose `child()` made this one: its run is this run's parent. */
  parent: RecorderState | undefined;
  /** The recorded run being read, for a child of a resumed run (see `whenReady`, turns.ts). */
  ready: Promise<void> | undefined;
  /** Set once `ready` has resolved. */
  loaded = false;
  /**
   * What a recorder made by `reopen` (or given a replay by `replayAgain`) keeps of its run, to
   * be reopened or replayed again without reading it (see `RunLog`): within its budget, or none.
   */
  log: RunLog | undefined;
  /** The last `replayAgain` made, until it settles: the next one waits for it. */
  replaying: Promise<unknown> | undefined;
  /** Set once `reopen` made another recorder of this run: every call is refused with it. */
  retired: LedgerError | undefined;
  /** What closing the run waits for first (`SessionRecorder.guardClose`). */
  readonly closeGuards = new Set<CloseGuard>();
  /** Calls waiting for `ready` that have not had their turn yet (see `inTurn`). */
  waiting = 0;
  /**
   * Set once the recorder is ready and no call waits for its turn: a call then runs at once,
   * skipping `inTurn`'s promise (a microtask each).
   */
  isReady = false;

  constructor(options: SessionRecorderOptions) {
    assertOptionsObject(options);
    assertId(options.sessionId, "$.sessionId");
    const runId = options.runId ?? uuidv7();
    assertId(runId, "$.runId");
    if (options.parentRunId !== undefined) assertId(options.parentRunId, "$.parentRunId");
    if (options.causedByEventId !== undefined)
      assertId(options.causedByEventId, "$.causedByEventId");
    assertEventStore(options.store);
    this.store = options.store;
    this.sessionId = options.sessionId;
    this.runId = runId;
    // Frozen: every event of this recorder reaches the store with it, unchecked (validate.ts).
    this.actor = Object.freeze(validateActor(options.actor, "$.actor", "invalid-argument"));
    this.parentRunId = options.parentRunId;
    this.causedByEventId = options.causedByEventId;
    this.redact = validateRedaction(options.redact, "$.redact");
    this.compactOption = options.compact;
    this.compactor = new PayloadCompactor(options.compact);
    // Every event of this recorder carries it, and most reach the store prevalidated.
    this.metadata =
      options.metadata === undefined
        ? undefined
        : validateMetadata(options.metadata, "$.metadata", "invalid-argument");
    this.queue = new CommitQueue({
      store: this.store,
      sessionId: this.sessionId,
      runId,
      nextSeq: 0,
      readBack: (sent, stored) => heardReadBack(this, sent, stored),
    });
  }
}

/**
 * What a recorder learns once the events of an append whose outcome was unknown are read back
 * (CommitQueue `readBack`): the outcomes that did not get in may be recorded again, the
 * requests that did wait for the call that retries them, and those stored count as committed.
 */
export function heardReadBack(
  state: RecorderState,
  sent: readonly NewEvent[],
  stored: readonly LedgerEvent[] | undefined,
): void {
  for (const [index, event] of sent.entries()) {
    const found = stored?.[index];
    state.open.readBack(event, found);
    state.unsureDeclines.readBack(event, stored);
    const orphan = state.unsureRequests.readBack(event, found);
    if (orphan !== undefined)
      state.open.strand(
        orphan,
        "its before* rejected (the store was unavailable) though its request got in, and no call has asked it again",
      );
    if (found === undefined) continue;
    state.compactor.committed(found.evidenceRefs ?? []);
    noteCommitted(state, found);
  }
}

/** What a recorder keeps of each event it committed: the replay's decisions, its cause, its end. */
export function noteCommitted(state: RecorderState, stored: LedgerEvent): void {
  // A decision on a call a crash left in flight answers the repeats of that call from now on.
  state.replay?.committed(stored);
  if (stored.type === "model.completed") state.lastModelCompletion = stored.eventId;
  else {
    const end = runEndStatus(stored.type);
    if (end !== undefined) state.status = end;
  }
}

/**
 * What closing a run waits for (`SessionRecorder.guardClose`), given the type of the event that
 * closes it: an adapter waits there for a call it is still recording in this process.
 */
export type CloseGuard = (type: "run.completed" | "run.failed" | "run.cancelled") => Promise<void>;

/** Has closing `state`'s run wait for `guard` (`SessionRecorder.guardClose`); returns what removes it. */
export function addCloseGuard(state: RecorderState, guard: CloseGuard): () => void {
  if (typeof guard !== "function")
    throw new InvalidArgumentError(
      "$.guard",
      "guardClose takes a function (type) => Promise<void>, called before the run is closed",
    );
  state.closeGuards.add(guard);
  return () => {
    state.closeGuards.delete(guard);
  };
}

/** Before an event of `type` is written: if it closes the run, every close guard, in turn. */
export async function awaitCloseGuards(state: RecorderState, type: EventType): Promise<void> {
  if (state.closeGuards.size === 0 || runEndStatus(type) === undefined) return;
  for (const guard of [...state.closeGuards])
    await guard(type as "run.completed" | "run.failed" | "run.cancelled");
}

/** The status an event of `type` closes its run with: undefined unless it ends the run. */
export function runEndStatus(type: EventType): RunStatus | undefined {
  return type === "run.completed" || type === "run.failed" || type === "run.cancelled"
    ? (type.slice(4) as RunStatus)
    : undefined;
}
