/**
 * Map keys and bounded maps for the caches an append reads and updates every time (a run's
 * head, a session's cursor): a recorder appends to one run over and over, so these are on
 * every append's path.
 */

let lastSession: string | undefined;
let lastRun: string | undefined;
let lastKey = "";

/**
 * The map key of a (session, run). The key of the pair last asked for is given again, the
 * same string: a string built anew is hashed anew by every Map it is looked up in, where one
 * already looked up keeps its hash.
 */
export function runKey(sessionId: string, runId: string): string {
  if (sessionId !== lastSession || runId !== lastRun) {
    lastSession = sessionId;
    lastRun = runId;
    lastKey = `${sessionId}\n${runId}`;
  }
  return lastKey;
}

/**
 * Sets `key` to `value`, and past `max` entries forgets the one first set. A key already there
 * keeps its place (its value replaced in place): deleting it and setting it again would move it
 * last, but every delete leaves a hole the Map compacts away by copying itself, several times a
 * second on a busy run. So the oldest key is the first set, not the least recently used: a hot
 * run's head may be forgotten once past `max` others, and is then read again.
 */
export function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  const size = map.size;
  map.set(key, value);
  if (map.size > size && map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
