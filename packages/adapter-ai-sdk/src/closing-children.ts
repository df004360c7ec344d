import type { EventStore, SessionRecorder } from "@agent-ledger/core";

/**
 * The child runs whose close waits, in this process, for calls their tool left in flight (see
 * `ToolCallContext.close`), by session and run. A resume of the tool's run in this process
 * meanwhile (a server resuming the run for each request) leaves such a child run to that close:
 * abandoning its calls would have the ledger say that an answer on its way was never recorded,
 * and the answer, once it came, could not be recorded on the closed run.
 */
const closing = new Map<string, Set<StoreId>>();

/** A store as one process may hold it twice: the same object, or the same kind and place. */
interface StoreId {
  store: EventStore;
  place: string | undefined;
}

const keyOf = (run: Pick<SessionRecorder, "sessionId" | "runId">) =>
  `${run.sessionId}\u0000${run.runId}`;

function storeId(store: EventStore): StoreId {
  const { kind, location } = store.describe();
  return { store, place: location === undefined ? undefined : `${kind}:${location}` };
}

/** `child`'s run closes once `close` settles, in this process. */
export function closingLater(child: SessionRecorder, close: Promise<unknown>): void {
  const key = keyOf(child);
  const id = storeId(child.store);
  const entries = closing.get(key) ?? new Set();
  entries.add(id);
  closing.set(key, entries);
  const done = () => {
    entries.delete(id);
    if (entries.size === 0 && closing.get(key) === entries) closing.delete(key);
  };
  close.then(done, done);
}

/** Whether `child`'s run (as a resume finds it) closes later in this process. */
export function isClosingLater(
  child: Pick<SessionRecorder, "store" | "sessionId" | "runId">,
): boolean {
  const entries = closing.get(keyOf(child));
  if (entries === undefined) return false;
  const id = storeId(child.store);
  for (const entry of entries)
    if (entry.store === id.store || (id.place !== undefined && entry.place === id.place))
      return true;
  return false;
}
