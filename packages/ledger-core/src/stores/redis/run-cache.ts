import type { RunHead } from "../../events/types.js";
import { type RunKeys, runKeys, type SessionKeys, sessionKeys } from "./keys.js";
import type { RedisStoreState } from "./store-state.js";

/** Run heads remembered from this store's own appends (saves the read before a write). */
const HEAD_CACHE_SIZE = 10_000;

/**
 * Key names of a (session, run), memoized: they cost two sha256 digests and a few strings,
 * and a recorder appends to the same run over and over.
 */
export function keysOf(
  state: RedisStoreState,
  sessionId: string,
  runId: string,
): { session: SessionKeys; run: RunKeys } {
  const id = `${sessionId}\n${runId}`;
  let keys = state.keys.get(id);
  if (keys === undefined) {
    keys = {
      session: sessionKeys(state.prefix, sessionId),
      run: runKeys(state.prefix, sessionId, runId),
    };
    state.keys.set(id, keys);
    if (state.keys.size > HEAD_CACHE_SIZE) {
      const oldest = state.keys.keys().next().value;
      if (oldest !== undefined) state.keys.delete(oldest);
    }
  }
  return keys;
}

/** `head` remembered as the head of the run at `key`, the oldest forgotten past HEAD_CACHE_SIZE. */
export function rememberHead(state: RedisStoreState, key: string, head: RunHead): void {
  state.heads.delete(key);
  state.heads.set(key, head);
  if (state.heads.size > HEAD_CACHE_SIZE) {
    const oldest = state.heads.keys().next().value;
    if (oldest !== undefined) state.heads.delete(oldest);
  }
}
