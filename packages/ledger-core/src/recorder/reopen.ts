import { lastListOf, resolveEvents } from "../compact/resolve.js";
import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { readWholeRun } from "../store/read-all.js";
import { loadRecordedChildren } from "./child-runs.js";
import type { ResumeOptions, SessionRecorderOptions } from "./recorder-options.js";
import type { RecorderState } from "./recorder-state.js";
import { adopt, loadRun } from "./resume.js";
import { type KeptRun, keepOneList, RunLog, storedSize } from "./run-log.js";
import { inTurn, retire } from "./turns.js";

/** The options of a recorder that continues the run of `previous`, as it records it. */
export function reopenOptions(previous: RecorderState): SessionRecorderOptions {
  const options: SessionRecorderOptions = {
    ...recordingOptions(previous),
    runId: previous.runId,
    actor: previous.actor,
  };
  if (previous.parentRunId !== undefined) options.parentRunId = previous.parentRunId;
  if (previous.causedByEventId !== undefined) options.causedByEventId = previous.causedByEventId;
  return options;
}

/** `SessionRecorder.resumeOtherRun`'s options: the run to continue, and who recorded it. */
export interface OtherRunOptions {
  runId: string;
  actor: Actor;
}

const OTHER_RUN_OPTIONS: KnownKeys<OtherRunOptions> = { runId: true, actor: true };

/**
 * What `SessionRecorder.resume` is given to continue another run of `state`'s session as
 * `state` records (its store, redaction, metadata, compaction, and how it reads a run). The
 * run's own `parentRunId` and cause are its `run.started`'s, read on resume.
 */
export function otherRunOptions(
  state: RecorderState,
  options: unknown,
): SessionRecorderOptions & OtherRunOptions & ResumeOptions {
  assertOptions(options, OTHER_RUN_OPTIONS, "resumeOtherRun", {
    at: "$",
    needs: "resumeOtherRun needs { runId, actor }: the run to continue and its actor",
  });
  const { runId, actor } = options as OtherRunOptions;
  return { ...recordingOptions(state), runId, actor, resolve: state.resolveOnLoad };
}

/** How `state` records, whatever the run: its store and session, redaction, metadata, compaction. */
function recordingOptions(
  state: RecorderState,
): Pick<SessionRecorderOptions, "store" | "sessionId" | "redact" | "metadata" | "compact"> {
  return {
    store: state.store,
    sessionId: state.sessionId,
    ...(state.redact !== undefined ? { redact: state.redact } : {}),
    ...(state.metadata !== undefined ? { metadata: state.metadata } : {}),
    ...(state.compactOption !== undefined ? { compact: state.compactOption } : {}),
  };
}

/**
 * `SessionRecorder.reopen`: makes `state` (a new recorder with the options of `previous`)
 * continue the run as `SessionRecorder.resume` would now. `previous` first has every call made
 * before this one committed, then refuses any other. When it kept its run (`RunLog`: it was made
 * by `reopen`, and its log stayed within its budget), only the events after its length are
 * read; otherwise the whole run is.
 */
export async function reopenRun(state: RecorderState, previous: RecorderState): Promise<void> {
  // The calls made before this one have had their turn (a child of a resumed run has read its
  // run): what they commit is part of the run reopened.
  await inTurn(previous, () => Promise.resolve());
  // Reopened twice at once, the run would have two writers that each think they continue it.
  if (previous.retired) throw previous.retired;
  const undo = retire(
    previous,
    new InvalidArgumentError(
      "$",
      `this recorder of run ${previous.runId} was reopened (reopen()): record with the recorder reopen() returned, which continues the run`,
    ),
  );
  try {
    await previous.queue.settled();
    state.resolveOnLoad = previous.resolveOnLoad;
    const kept = previous.log?.keptUpTo(previous.queue.nextSeq);
    if (kept !== undefined) await catchUp(state, previous, kept);
    else await loadRun(state, true, true);
  } catch (error) {
    undo();
    throw error;
  }
}

/**
 * Continues in `state` the run `previous` kept (`kept.written`: what it committed since it
 * loaded the run), with the events another writer appended after them: a person's decisions, a
 * resumed process's calls. Those are the only events read, and the only blobs fetched are theirs.
 */
async function catchUp(
  state: RecorderState,
  previous: RecorderState,
  kept: KeptRun,
): Promise<void> {
  const { store } = state;
  const address = { sessionId: state.sessionId, runId: state.runId };
  const tail = await readWholeRun(store, address, previous.queue.nextSeq);
  const { written, cache } = kept;
  const stored = written.concat(tail);
  const resolved = state.resolveOnLoad ? await resolveEvents(store, stored, { cache }) : stored;
  // The last request's message list, which the next one extends: the previous recorder's own,
  // unless another writer made a model call since.
  const lastList = tail.some((event) => event.type === "model.requested")
    ? await lastListOf(store, tail, { cache })
    : previous.compactor.lastList;
  const events = kept.loaded.concat(resolved);
  // The whole run as kept, within the budget or not at all: the log it continues held all but
  // the tail, so counting only what this one writes would let a chain of reopens grow unbounded.
  state.log = RunLog.keep(events, cache, kept.storedBytes + storedSize(tail));
  adopt(state, events);
  await loadRecordedChildren(state);
  // Every read done: the previous recorder's compaction goes on here (the refs committed in the
  // session, which are not put again; its memo of hashed contents).
  state.compactor = previous.compactor;
  state.canonical = previous.canonical;
  for (const event of tail) state.compactor.committed(event.evidenceRefs ?? []);
  state.compactor.setLastList(lastList);
  keepOneList(cache, lastList?.ref);
}
