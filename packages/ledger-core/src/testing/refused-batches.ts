import { LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";

/**
 * What a racing writer process sends besides its own events (the cross-process race tests'
 * children): two batches the store must refuse whole while the other writers commit. Each
 * holds a new, valid event first, so a store that wrote part of a batch would show it:
 * - a payload with NaN, refused as `non-serializable` at `$.events[1].payload.value`;
 * - an event reusing `committedId` (one of this writer's, already stored) with other content,
 *   refused as `duplicate-event`, which only the store can see, under the others' commits.
 * Their event ids start with `refused-`: the race checks find none stored. Throws if a batch
 * is not refused as it must be. Returns how many batches were refused.
 */
export async function sendRefusedBatches(
  store: EventStore,
  options: { sessionId: string; runId: string; tag: string; committedId: string },
): Promise<number> {
  const { sessionId, runId, tag } = options;
  const batches = [
    {
      code: "non-serializable",
      path: "$.events[1].payload.value",
      second: { eventId: `refused-${tag}-nan`, type: "x.race", payload: { value: Number.NaN } },
    },
    {
      code: "duplicate-event",
      path: undefined,
      second: { eventId: options.committedId, type: "x.race", payload: { other: tag } },
    },
  ] as const;
  for (const { code, path, second } of batches) {
    const first = { eventId: `refused-${tag}-${code}`, type: "x.race", payload: { tag } } as const;
    for (;;) {
      // At the run's head: a refusal must come from the batch itself, not its position. If
      // another writer moves the head first, the store may answer `conflict`: read it again.
      const head = await store.runHead({ sessionId, runId });
      try {
        await store.append({ sessionId, runId, expectedSeq: head.length, events: [first, second] });
      } catch (error) {
        if (LedgerError.isInstance(error, "conflict")) continue;
        const refused = LedgerError.isInstance(error, code);
        if (refused && (path === undefined || (error as LedgerError).path === path)) break;
        throw new Error(
          `${tag}: expected ${code}${path ? ` at ${path}` : ""}, got ${String(error)}`,
        );
      }
      throw new Error(`${tag}: a batch with ${code} was accepted`);
    }
  }
  return batches.length;
}
