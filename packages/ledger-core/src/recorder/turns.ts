import type { LedgerError } from "../events/errors.js";
import type { RecorderState } from "./recorder-state.js";
import { loadRun } from "./resume.js";

/**
 * Runs `call` once the recorder is ready, calls in the order they were made. Replay matches
 * calls by order (the k-th model call, tool calls of one name), and a run's events are in the
 * order its calls reached the queue, so a call must never overtake one made before it: until
 * every call that waits for the recorder has had its turn, a new call waits behind them (the
 * reactions to one promise run in the order they were added) instead of running at once.
 * `call` runs synchronously up to its first `await`, within its turn.
 */
export function inTurn<T>(state: RecorderState, call: () => Promise<T>): Promise<T> {
  if (state.isReady) return rejectThrown(call);
  if (state.retired) return Promise.reject(state.retired);
  if (whenReady(state) === undefined) return rejectThrown(call);
  state.waiting++;
  return (state.ready as Promise<void>).then(
    () => {
      tookTurn(state);
      return call();
    },
    (error: unknown) => {
      tookTurn(state);
      throw error;
    },
  );
}

function tookTurn(state: RecorderState): void {
  state.waiting--;
  if (state.waiting === 0 && state.loaded && !state.retired) state.isReady = true;
}

/**
 * Refuses every later call of a recorder that `reopen` is replacing, with `error`: every call
 * made from now on, and every event not in its commit queue yet (a call reaches the queue as it
 * is made, but one that waits first, such as `recordEvidence` checking its blobs). Returns what
 * takes that back, should the reopening fail.
 */
export function retire(state: RecorderState, error: LedgerError): () => void {
  state.retired = error;
  state.isReady = false;
  return () => {
    // The next call finds out again whether it may run at once (`whenReady`, `tookTurn`).
    state.retired = undefined;
  };
}

/**
 * Undefined once calls may run: at once for a new run or a resumed root (read by `resume`).
 * A child of a resumed parent first reads and adopts the child run recorded before the crash:
 * the promise of that read.
 */
function whenReady(state: RecorderState): Promise<void> | undefined {
  if (state.ready) return state.ready;
  if (state.parent?.replay === undefined) {
    state.isReady = true;
    return undefined;
  }
  state.ready = loadRun(state, false).then(
    () => {
      state.loaded = true;
      if (state.waiting === 0 && !state.retired) state.isReady = true;
    },
    (error: unknown) => {
      // Nothing was committed or answered meanwhile (every call waits for this): the next
      // call reads the run again instead of failing forever on one unreachable moment.
      state.ready = undefined;
      throw error;
    },
  );
  return state.ready;
}

/**
 * `call()`, or a promise rejected with what it threw: every async API of the recorder rejects,
 * never throws (`Promise.allSettled(attempts.map(...))` must see each call's own outcome).
 */
export function rejectThrown<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (error) {
    return Promise.reject(error);
  }
}
