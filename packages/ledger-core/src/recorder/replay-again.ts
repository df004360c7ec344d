import { BlobCache, resolveEvents } from "../compact/resolve.js";
import { InvalidArgumentError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import { collectAttempts, type RecordedAttempt, ReplayCursor } from "../replay/replay-cursor.js";
import { readWholeRun } from "../store/read-all.js";
import type { RecorderState } from "./recorder-state.js";
import { type KeptRun, keepOneList, RunLog, storedSize } from "./run-log.js";
import { inTurn } from "./turns.js";

/** Which recorded attempts `SessionRecorder.replayAgain` answers again. */
export type ReplaySelection = (attempt: RecordedAttempt) => boolean;

/**
 * `SessionRecorder.replayAgain`: one at a time, in the order they are made, so that the replay
 * left is that of the last call made.
 */
export function replayAgain(state: RecorderState, select: unknown): Promise<ReplayCursor> {
  if (typeof select !== "function")
    return Promise.reject(
      new InvalidArgumentError(
        "$.select",
        "replayAgain needs { select }: a function that takes the recorded attempts to answer again",
      ),
    );
  const before = state.replaying ?? Promise.resolve();
  const replaying = before
    .catch(() => undefined)
    .then(() => inTurn(state, () => rearm(state, select as ReplaySelection)));
  state.replaying = replaying;
  const done = () => {
    if (state.replaying === replaying) state.replaying = undefined;
  };
  replaying.then(done, done);
  return replaying;
}

/** Makes the replay of `state` a new cursor over the attempts of its run `select` takes. */
async function rearm(state: RecorderState, select: ReplaySelection): Promise<ReplayCursor> {
  const { loaded, written, cache } = await keptRun(state);
  const chosen = new Set<string>();
  for (const attempt of collectAttempts(loaded.concat(written)))
    if (select(attempt)) chosen.add(attempt.attemptId);
  const ofChosen = (events: readonly LedgerEvent[]) =>
    events.filter((event) => event.attemptId !== undefined && chosen.has(event.attemptId));
  // Only the events committed since the run was loaded are as stored, and only the chosen
  // ones are resolved (the content of their blobs is in the cache: nothing is fetched).
  const committed = ofChosen(written);
  const resolved = state.resolveOnLoad
    ? await resolveEvents(state.store, committed, { cache })
    : committed;
  keepOneList(cache, state.compactor.lastList?.ref);
  const replay = new ReplayCursor(ofChosen(loaded).concat(resolved));
  state.replay = replay;
  return replay;
}

/**
 * The run as `state` keeps it (`RunLog`: a recorder made by `reopen`). A recorder that keeps
 * none (a new run, a resumed one, one whose log outgrew its budget), or whose log misses events
 * (an append whose outcome was unknown), reads the whole run once and keeps it from then on:
 * the next `replayAgain` reads nothing, and its `reopen` reads only what other writers
 * appended. The batches it commits while the run is read are heard meanwhile, so the log it
 * keeps misses none. A run read whole that is over the budget already is not kept: every
 * `replayAgain` reads it, as the first did.
 */
async function keptRun(state: RecorderState): Promise<Omit<KeptRun, "storedBytes">> {
  const previous = state.log;
  const kept = previous?.keptSoFar();
  if (kept !== undefined) return kept;
  const heard: LedgerEvent[] = [];
  state.queue.listen((events) => {
    for (const event of events) heard.push(event);
  });
  let stored: LedgerEvent[];
  let loaded: LedgerEvent[];
  const cache = new BlobCache();
  try {
    stored = await readWholeRun(state.store, { sessionId: state.sessionId, runId: state.runId });
    loaded = state.resolveOnLoad ? await resolveEvents(state.store, stored, { cache }) : stored;
  } catch (error) {
    state.queue.listen(previous && ((events) => previous.wrote(events)));
    throw error;
  }
  const since = heard.filter((event) => event.seq >= loaded.length);
  const log = RunLog.keep(loaded, cache, storedSize(stored));
  log?.wrote(since);
  state.queue.listen(log && ((events) => log.wrote(events)));
  state.log = log;
  return { loaded, written: since, cache };
}
