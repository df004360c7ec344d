import type { CompactedEvent, CompactSession } from "../compact/externalize.js";
import { ConflictError, LedgerError, RunClosedError } from "../events/errors.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import { noteCommitted, type RecorderState } from "./recorder-state.js";
import { mergedMetadata } from "./redact-metadata.js";
import { runTakenElsewhere } from "./run-taken-elsewhere.js";
import { inTurn } from "./turns.js";

/**
 * Commits one event of the recorder, in its turn, through its group-commit queue. `claim`, if
 * given, runs in the recorder's turn right before the append (see `OpenAttempts`).
 */
export async function commitEvent(
  state: RecorderState,
  event: NewEvent,
  blobs?: string[],
  claim?: () => void,
): Promise<LedgerEvent> {
  return (await commitEvents(state, [event], blobs, claim))[0] as LedgerEvent;
}

/**
 * Commits events of the recorder as one entry of its queue (`commitEvent` for one): in one
 * append, all or none of them (the queue sends an entry whole, and alone again when a batch it
 * shared was refused). Resolves with them as stored, in order.
 */
export async function commitEvents(
  state: RecorderState,
  events: NewEvent[],
  blobs?: string[],
  claim?: () => void,
): Promise<LedgerEvent[]> {
  let committed: LedgerEvent[];
  try {
    const send = () => {
      claim?.();
      // The events are this recorder's own objects (`record` copies its caller's), so they are
      // completed in place: a merged copy of each, marked prevalidated a second time, cost more
      // than any other step of the recorder on every recorded call. All before any is queued:
      // a redaction of one's metadata that throws leaves none queued.
      for (let index = 0; index < events.length; index++) {
        try {
          withDefaults(state, events[index] as NewEvent);
        } catch (error) {
          throw events.length > 1 ? ofListedEvent(error, index, events.length) : error;
        }
      }
      return state.queue.commit(events, blobs);
    };
    // After an append whose outcome was unknown, the run is read back before anything is
    // claimed or queued: an outcome that did not get in may then be recorded again
    // (OpenAttempts.readBack). Every call waits for that one read, so none overtakes another.
    committed = await inTurn(state, () =>
      state.queue.unsure ? state.queue.resolveUnknown().then(send) : send(),
    );
  } catch (error) {
    throw runBegunElsewhere(state, error) ?? (await runTakenElsewhere(state, error)) ?? error;
  }
  for (const stored of committed) noteCommitted(state, stored);
  return committed;
}

/**
 * The `conflict` of a recorder's first write on a run it took for empty (`new SessionRecorder`,
 * `child()`: it did not load the run) that already has events, told as such: "the writer
 * expected 0" does not say that the run exists, nor that `resume` is the way to continue it.
 * The `run-closed` of such a write (the run exists and ended) too: "another writer closed run r
 * while this recorder had it open" would tell of a race where there was none (a runId used
 * again). Code and fields are the store's. Undefined for any other error.
 */
function runBegunElsewhere(
  state: RecorderState,
  error: unknown,
): ConflictError | RunClosedError | undefined {
  if (LedgerError.isInstance(error, "run-closed")) {
    const status = error.details?.status;
    if (state.queue.nextSeq !== 0 || typeof status !== "string") return undefined;
    const { sessionId, runId } = state;
    return new RunClosedError({
      sessionId,
      runId,
      status,
      message: `run ${runId} already exists and is ${status}, and this recorder did not load it: it writes the run as a new one (new SessionRecorder, or child()), so nothing was written, and a closed run accepts no more events. Give this recorder another runId; SessionRecorder.resume({ store, sessionId, runId, actor }) reads the recorded run as it ended.`,
    });
  }
  if (!LedgerError.isInstance(error, "conflict")) return undefined;
  const { expectedSeq, actualSeq } = error;
  if (expectedSeq !== 0 || !(actualSeq > 0)) return undefined;
  const { sessionId, runId } = state;
  return new ConflictError({
    expectedSeq,
    actualSeq,
    sessionId,
    runId,
    message: `run ${runId} already has ${actualSeq} events, and this recorder did not load them: it writes the run as a new one (new SessionRecorder, or child()), so nothing was written. To continue a recorded run (a loop resumed after a crash), make its recorder with SessionRecorder.resume({ store, sessionId, runId, actor }); if another writer holds the run, leave it to that writer, or give this recorder another runId.`,
  });
}

/**
 * Gives an event the recorder's actor and metadata, as `{ actor, metadata, ...event }` would:
 * a field the event has (even undefined) wins, and metadata of both is merged, the event's
 * keys last, then redacted (`mergedMetadata`). All are validated copies, so a prevalidated
 * event stays prevalidated.
 */
function withDefaults(state: RecorderState, event: NewEvent): void {
  if (!Object.hasOwn(event, "actor")) event.actor = state.actor;
  if (Object.hasOwn(event, "metadata") && !event.metadata) return;
  const metadata = mergedMetadata(state, event.type, event.metadata);
  if (metadata !== undefined) event.metadata = metadata;
}

/**
 * Commits an event whose payload went through `compact`: its refs added to `evidenceRefs`
 * (the store indexes them for retention), its new blobs stored by the same append (one
 * round trip, one commit where the store can: `AppendRequest.blobs`), and once committed
 * they are remembered so later events neither store nor index them again.
 */
export async function commitCompacted(
  state: RecorderState,
  event: NewEvent,
  compact: CompactSession,
  claim?: () => void,
): Promise<LedgerEvent> {
  return (await commitAllCompacted(state, [{ event, compact }], claim))[0] as LedgerEvent;
}

/** An event and the compaction its payload went through (`commitAllCompacted`). */
export interface CompactedRecord {
  event: NewEvent;
  compact: CompactSession;
}

/**
 * `commitCompacted` for several events committed together (`commitEvents`): each names its own
 * refs, and the append stores the new blobs of all of them (each once).
 */
export async function commitAllCompacted(
  state: RecorderState,
  records: readonly CompactedRecord[],
  claim?: () => void,
): Promise<LedgerEvent[]> {
  const results = records.map(({ event, compact }) => {
    const result = compact.result();
    if (result.evidenceRefs.length > 0)
      event.evidenceRefs = [...(event.evidenceRefs ?? []), ...result.evidenceRefs];
    return result;
  });
  // One event's own map as it is (every recorded call): a merged copy only for several.
  const blobs =
    results.length === 1
      ? (results[0] as CompactedEvent).blobs
      : new Map(results.flatMap((result) => [...result.blobs]));
  const stored = await commitEvents(
    state,
    records.map((record) => record.event),
    blobs.size > 0 ? [...blobs.values()] : undefined,
    claim,
  );
  for (const [index, { compact }] of records.entries()) {
    state.compactor.committed((results[index] as CompactedEvent).evidenceRefs);
    if (compact.list) state.compactor.setLastList(compact.list);
  }
  state.log?.wroteBlobs(blobs);
  return stored;
}

/**
 * The error of preparing event `index` of `count` committed together (`recordAll`), saying
 * which event it is: as it was when its path names the event (`$.events[2].payload.message`);
 * else (a redact function that threw for its payload or metadata, at `$.redact`) the same code
 * and path, the event's position in the message and in `details.index`, the error as `cause`.
 */
export function ofListedEvent(error: unknown, index: number, count: number): unknown {
  const at = `$.events[${index}]`;
  const path = LedgerError.isInstance(error) ? error.path : undefined;
  if (path === undefined || path === at || path.startsWith(`${at}.`)) return error;
  const listed = error as LedgerError;
  return new LedgerError(
    listed.code,
    `${listed.message} (for ${at}, event ${index + 1} of the ${count} recorded together: none was written)`,
    { path, cause: listed, details: { ...listed.details, index } },
  );
}
