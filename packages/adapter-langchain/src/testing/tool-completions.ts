import type { EventStore } from "@agent-ledger/core";
import { watchAppends } from "./watched-appends.js";

/**
 * `store`, watched: `completed(name)` settles once the `tool.completed` of a call of the tool
 * `name` has committed (or at once if it already has). A crash child running tools in parallel
 * waits on it inside the tool it dies in, so that the others are recorded when it dies, rather
 * than sleeping and hoping they are.
 */
export function watchToolCompletions(store: EventStore): {
  store: EventStore;
  completed(name: string): Promise<void>;
} {
  const names = new Map<string, string>();
  const done = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  const watched = watchAppends(store, (request) => {
    for (const event of request.events) {
      if (event.attemptId === undefined) continue;
      const payload = event.payload as { name?: unknown } | undefined;
      if (event.type === "tool.requested" && typeof payload?.name === "string")
        names.set(event.attemptId, payload.name);
      const name = names.get(event.attemptId);
      if (event.type !== "tool.completed" || name === undefined) continue;
      done.add(name);
      for (const resolve of waiting.get(name) ?? []) resolve();
      waiting.delete(name);
    }
  });
  return {
    store: watched,
    completed: (name) =>
      done.has(name)
        ? Promise.resolve()
        : new Promise((resolve) => waiting.set(name, [...(waiting.get(name) ?? []), resolve])),
  };
}
