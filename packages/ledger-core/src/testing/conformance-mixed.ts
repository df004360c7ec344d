import assert from "node:assert/strict";
import { LedgerError } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { AppendRequest, AppendResult, EventStore } from "../store/event-store.js";
import {
  assertChain,
  assertCursors,
  type CaseFactory,
  freshId,
  note,
  readAll,
  readSessionAll,
  withStore,
  yieldTurn,
} from "./conformance-helpers.js";
import { rng } from "./conformance-random.js";

const WORKERS = 8;
const STEPS = 30;

/** What a write may be refused with while others race it; anything else fails the case. */
const RACE_REFUSALS = new Set(["conflict", "run-closed", "not-found"]);

interface Acknowledged {
  request: AppendRequest;
  events: LedgerEvent[];
}

/**
 * Eight writers at once on three runs of each of two sessions: new batches at the head they
 * read, stale positions, closing events, exact retries of their own batches, ids of another
 * run, and forks, all racing (the store's group commit gathers them as it likes). After each
 * call the writer checks what must hold whatever the others did; at the end every event a
 * call reported is stored exactly once, as reported, and nothing else is, with hash chains and
 * session cursors intact.
 */
async function mixedWriters(handles: EventStore[], seed: number): Promise<void> {
  const store = handles[0] as EventStore;
  const sessionIds = [freshId("mixed"), freshId("mixed")];
  const runIds = new Map(sessionIds.map((id) => [id, ["run-a", "run-b", "run-c"]]));
  const acknowledged: Acknowledged[] = [];
  const forked: LedgerEvent[][] = [];

  const worker = async (index: number): Promise<void> => {
    const r = rng(seed * 100 + index);
    // With several handles on one database (processes), each writer keeps to one of them.
    const store = handles[index % handles.length] as EventStore;
    const mine: Acknowledged[] = [];
    for (let step = 0; step < STEPS; step++) {
      const label = `seed ${seed}, writer ${index}, step ${step}`;
      if (r.chance(0.5)) await yieldTurn();
      const sessionId = r.pick(sessionIds);
      const runId = r.pick(runIds.get(sessionId) ?? []);
      const address = { sessionId, runId };
      const roll = r.next();
      if (roll < 0.15 && mine.length > 0) {
        // An exact retry of an acknowledged batch: deduplicated, with the events it reported.
        const earlier = r.pick(mine);
        const again = await store.append(structuredClone(earlier.request));
        assert.equal(again.deduplicated, true, `${label}: a retry must be deduplicated`);
        assert.deepStrictEqual(again.events, earlier.events, `${label}: the retry's events`);
        continue;
      }
      if (roll < 0.25 && acknowledged.length > 0) {
        // An id stored in this session (any run) is refused; in the other session it is new.
        const other = r.pick(acknowledged);
        const reused = other.events[0] as LedgerEvent;
        const sameSession = reused.sessionId === sessionId;
        const head = await store.runHead(address);
        const events: NewEvent[] = [
          note({ reuse: index }),
          { ...note(step), eventId: reused.eventId },
        ];
        const outcome = await settle(store, { ...address, expectedSeq: head.length, events });
        if (sameSession) {
          assert.ok(
            "error" in outcome &&
              ["duplicate-event", "conflict", "run-closed"].includes(outcome.error.code),
            `${label}: an id stored in the session must not be written again (${JSON.stringify(outcome)})`,
          );
        } else if ("ok" in outcome) {
          acknowledged.push(outcome.ok);
          mine.push(outcome.ok);
        }
        continue;
      }
      if (roll < 0.33) {
        const head = await store.runHead(address);
        if (head.length === 0) continue;
        const newRunId = `fork-${index}-${step}`;
        try {
          const result = await store.fork({ ...address, newRunId, uptoSeq: r.int(1, head.length) });
          forked.push(result.events);
          runIds.get(sessionId)?.push(newRunId);
        } catch (error) {
          if (!LedgerError.isInstance(error) || !RACE_REFUSALS.has(error.code)) throw error;
        }
        continue;
      }
      const head = await store.runHead(address);
      const stale = roll < 0.45;
      const expectedSeq = stale ? Math.max(0, head.length + r.int(-2, 2)) : head.length;
      const count = r.int(1, 3);
      const events: NewEvent[] = Array.from({ length: count }, (_, at) =>
        at === count - 1 && r.chance(0.04)
          ? { eventId: uuidv7(), type: "run.completed", payload: { by: index } }
          : note({ writer: index, step, at }),
      );
      const outcome = await settle(store, { ...address, expectedSeq, events });
      if ("ok" in outcome) {
        assert.deepStrictEqual(
          outcome.ok.events.map((event) => event.seq),
          events.map((_, at) => expectedSeq + at),
          `${label}: the events' seq`,
        );
        acknowledged.push(outcome.ok);
        mine.push(outcome.ok);
      } else if (!RACE_REFUSALS.has(outcome.error.code)) {
        assert.fail(`${label}: refused with ${outcome.error.code}: ${outcome.error.message}`);
      }
    }
  };

  await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));

  const reported = [...acknowledged.flatMap((item) => item.events), ...forked.flat()];
  // Ids are unique per session: the same id may stand in both.
  const key = (event: LedgerEvent) => `${event.sessionId}/${event.eventId}`;
  const byId = new Map(reported.map((event) => [key(event), event]));
  assert.equal(byId.size, reported.length, `seed ${seed}: an event was reported twice`);
  for (const sessionId of sessionIds) {
    const session = await readSessionAll(store, sessionId);
    assertCursors(`seed ${seed}: session`, session);
    for (const event of session) {
      assert.deepStrictEqual(
        event,
        byId.get(key(event)),
        `seed ${seed}: stored event ${event.eventId} is not what a call reported`,
      );
      byId.delete(key(event));
    }
    for (const runId of runIds.get(sessionId) ?? []) {
      const run = await readAll(store, { sessionId, runId });
      assertChain(`seed ${seed}: run ${runId}`, run);
      assert.equal((await store.runHead({ sessionId, runId })).length, run.length);
    }
  }
  assert.deepStrictEqual([...byId.keys()], [], `seed ${seed}: reported events that are not stored`);
}

async function settle(
  store: EventStore,
  request: AppendRequest,
): Promise<{ ok: Acknowledged } | { error: LedgerError }> {
  let result: AppendResult;
  try {
    result = await store.append(structuredClone(request));
  } catch (error) {
    if (!LedgerError.isInstance(error)) throw error;
    return { error };
  }
  assert.equal(result.deduplicated, false, "a batch of new ids cannot be deduplicated");
  return { ok: { request, events: result.events } };
}

/** The mixed writers on `handles` (one store, or several handles on one database). */
export async function runMixedWriters(handles: EventStore[]): Promise<void> {
  for (const seed of [1, 2]) await mixedWriters(handles, seed);
}

export const mixedCases: CaseFactory = (makeStore) => [
  {
    group: "concurrency",
    name: "eight writers racing with new batches, stale positions, retries, reused ids, closes and forks: every reported event stored once, as reported",
    timeoutMs: 120_000,
    run: withStore(makeStore, (store) => runMixedWriters([store])),
  },
];
