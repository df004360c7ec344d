import assert from "node:assert/strict";
import { uuidv7 } from "../events/ids.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { AppendRequest, EventPage, EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import {
  assertChain,
  type CaseFactory,
  freshId,
  someRef,
  withStore,
} from "./conformance-helpers.js";
import {
  answerKind,
  comparable,
  type Outcome,
  outcome,
  page,
  runs,
  type Step,
  sessions,
} from "./conformance-model-answers.js";
import { type Rng, rng } from "./conformance-random.js";

/**
 * The store against the reference: one seeded, random sequence of appends (new batches, stale
 * positions, exact and reordered retries, altered retries, ids reused across runs, batches
 * partly stored, closing events), forks, session deletions and paged reads is sent to the
 * store under test and to a `MemoryEventStore`, and every answer must match: the same events
 * (ids, seq, cursors, payloads, links) or the same error (code, path, actualSeq, eventId).
 * Times and hashes are each store's own (the acceptance time is hashed), so they are left out
 * of the comparison, and each run's hash chain is checked on its own at the end. Ids a fork
 * makes are random, so they are compared by position (`<run>#<seq>`).
 */

const SEEDS = [1, 2, 3];
const STEPS = 120;

const TEXTS = ["", "plain", "ünïcödé", "emoji 🎉", 'quote " and \\ slash', "line\nbreak"];
const TYPES = ["x.note", "x.step", "model.requested", "model.completed", "tool.completed"];
const CLOSING = ["run.completed", "run.failed", "run.cancelled"];

function value(r: Rng, depth: number): JsonValue {
  const kind = r.int(0, depth > 1 ? 3 : 5);
  if (kind === 0) return r.int(-1000, 1000);
  if (kind === 1) return r.pick(TEXTS);
  if (kind === 2) return r.chance(0.5);
  if (kind === 3) return null;
  if (kind === 4) return Array.from({ length: r.int(0, 3) }, () => value(r, depth + 1));
  return object(r, depth + 1);
}

function object(r: Rng, depth: number): JsonObject {
  const out: JsonObject = {};
  for (const key of ["b", "a", "z", "é", "k1"]) if (r.chance(0.5)) out[key] = value(r, depth);
  return out;
}

/** The same JSON with every object's keys in reverse order (the same event to a retry). */
function reordered(json: JsonValue): JsonValue {
  if (Array.isArray(json)) return json.map(reordered);
  if (json === null || typeof json !== "object") return json;
  const out: JsonObject = {};
  for (const key of Object.keys(json).reverse()) out[key] = reordered(json[key] as JsonValue);
  return out;
}

async function sequence(
  handles: EventStore[],
  reference: EventStore,
  seed: number,
  seen: Map<string, number>,
): Promise<void> {
  const r = rng(seed);
  const store = handles[0] as EventStore;
  // Ids that a case-folding, space-trimming or normalising comparison would merge are distinct.
  const base = freshId("model");
  const sessionIds = [base, base.toUpperCase()];
  const runIds = new Map(
    sessionIds.map((id) => [id, ["run-a", "RUN-A", "run-a ", "run-\u00e1", "run-a\u0301"]]),
  );
  /** Batches each store accepted as new, in order; the event ids each session holds. */
  const accepted: AppendRequest[] = [];
  /** Accepted batches of sessions deleted since. */
  const forgotten: AppendRequest[] = [];
  const stored = new Map<string, { eventId: string; runId: string }[]>(
    sessionIds.map((id) => [id, []]),
  );
  const aliases = { store: new Map<string, string>(), reference: new Map<string, string>() };
  let forks = 0;

  const newEvent = (sessionId: string, closing: boolean): NewEvent => {
    const event: NewEvent = {
      eventId: uuidv7(),
      type: (closing ? r.pick(CLOSING) : r.pick(TYPES)) as NewEvent["type"],
      payload: object(r, 0),
    };
    if (r.chance(0.3)) event.stepId = `step-${r.int(0, 5)}`;
    if (r.chance(0.3)) event.attemptId = uuidv7();
    if (r.chance(0.3)) event.actor = { type: r.pick(["agent", "tool", "human"] as const), id: "m" };
    if (r.chance(0.2)) event.metadata = { source: r.pick(TEXTS) };
    if (r.chance(0.15)) event.evidenceRefs = [someRef(`evidence-${r.int(0, 3)}`)];
    const known = stored.get(sessionId) ?? [];
    if (r.chance(0.25) && known.length > 0) event.causedByEventId = r.pick(known).eventId;
    return event;
  };
  const append = (request: AppendRequest): Step["call"] => {
    return (target, seen) =>
      outcome(
        () => target.append(structuredClone(request)),
        (result: { events: LedgerEvent[]; deduplicated: boolean }) => ({
          deduplicated: result.deduplicated,
          events: result.events.map((event) => comparable(event, seen)),
        }),
      );
  };

  const plan = async (): Promise<Step> => {
    const sessionId = r.pick(sessionIds);
    const runId = r.pick(runIds.get(sessionId) ?? []);
    const address = { sessionId, runId };
    const head = await reference.runHead(address);
    const roll = r.next();
    if (roll < 0.4 || accepted.length === 0) {
      const count = r.int(1, 3);
      const events = Array.from({ length: count }, (_, index) =>
        newEvent(sessionId, index === count - 1 && r.chance(0.06)),
      );
      const request = { ...address, expectedSeq: head.length, events };
      return { what: `append ${count} at ${head.length}`, call: append(request), batch: request };
    }
    if (roll < 0.48) {
      const expectedSeq =
        r.chance(0.5) || head.length === 0 ? head.length + r.int(1, 3) : r.int(0, head.length - 1);
      const request = { ...address, expectedSeq, events: [newEvent(sessionId, false)] };
      return {
        what: `append at stale ${expectedSeq} (length ${head.length})`,
        call: append(request),
      };
    }
    const earlier = r.pick(accepted);
    if (roll < 0.62) {
      // Now and then a batch of a session deleted since: to the store, a new write.
      if (forgotten.length > 0 && r.chance(0.2)) {
        const batch = r.pick(forgotten);
        return { what: "resend a batch of a deleted session", call: append(batch), batch };
      }
      return { what: "retry an accepted batch", call: append(earlier) };
    }
    if (roll < 0.66) {
      const events = earlier.events.map((event) => ({
        ...event,
        payload: reordered(event.payload as JsonValue),
      }));
      return { what: "retry with keys reordered", call: append({ ...earlier, events }) };
    }
    if (roll < 0.71) {
      const [first, ...rest] = earlier.events as [NewEvent, ...NewEvent[]];
      const events = [{ ...first, payload: { altered: r.int(0, 9) } }, ...rest];
      return { what: "retry with other content", call: append({ ...earlier, events }) };
    }
    if (roll < 0.76) {
      const other = (stored.get(sessionId) ?? []).filter((known) => known.runId !== runId);
      const reused = other.length > 0 ? r.pick(other).eventId : uuidv7();
      const events = [
        newEvent(sessionId, false),
        { ...newEvent(sessionId, false), eventId: reused },
      ];
      return {
        what: "an id of another run",
        call: append({ ...address, expectedSeq: head.length, events }),
      };
    }
    if (roll < 0.8) {
      // The first event of a stored batch, then a new one, at that run's current end.
      const events = [earlier.events[0] as NewEvent, newEvent(earlier.sessionId, false)];
      const { length } = await reference.runHead(earlier);
      return {
        what: "a batch partly stored",
        call: append({ ...earlier, expectedSeq: length, events }),
      };
    }
    if (roll < 0.86) {
      const existing = r.chance(0.15);
      const newRunId = existing ? r.pick(runIds.get(sessionId) ?? []) : `fork-${forks}`;
      const uptoSeq = r.chance(0.1) ? head.length + 1 : Math.max(1, r.int(1, head.length));
      const request = { ...address, newRunId, uptoSeq };
      return {
        what: `fork ${runId} up to ${uptoSeq} into ${newRunId}`,
        fork: { sessionId, newRunId },
        call: (target, seen) =>
          outcome(
            () => target.fork(request),
            (result: { events: LedgerEvent[] }) => {
              for (const event of result.events)
                seen.set(event.eventId, `${newRunId}#${event.seq}`);
              return result.events.map((event) => comparable(event, seen));
            },
          ),
      };
    }
    if (roll < 0.89) {
      // Retention: most often the session's open runs are closed first (each append compared
      // too), else an open run refuses it. Once deleted, the session starts over on its next
      // append. Blob counts depend on put times, so only the events and runs removed count.
      const closing: AppendRequest[] = [];
      if (r.chance(0.7)) {
        for (const id of runIds.get(sessionId) ?? []) {
          const runHead = await reference.runHead({ sessionId, runId: id });
          if (runHead.exists && runHead.status === "running") {
            const events = [newEvent(sessionId, true)];
            closing.push({ sessionId, runId: id, expectedSeq: runHead.length, events });
          }
        }
      }
      return {
        what: `deleteSession ${sessionId} after closing ${closing.length} runs`,
        deleted: sessionId,
        call: async (target, seen) => {
          const answers: Outcome[] = [];
          for (const request of closing) answers.push(await append(request)(target, seen));
          answers.push(
            await outcome(
              () => target.deleteSession(sessionId),
              (result: { sessionId: string; deletedEvents: number; deletedRuns: number }) => ({
                sessionId: result.sessionId,
                deletedEvents: result.deletedEvents,
                deletedRuns: result.deletedRuns,
              }),
            ),
          );
          return { ok: answers };
        },
      };
    }
    const read = r.int(0, 4);
    if (read === 0) {
      const request = { ...address, fromSeq: r.int(0, head.length + 1), limit: r.int(1, 4) };
      return {
        what: `readRun from ${request.fromSeq} limit ${request.limit}`,
        call: (target, seen) =>
          outcome(
            () => target.readRun(request),
            (result: EventPage) => page(result, seen),
          ),
      };
    }
    if (read === 1) {
      const request = { sessionId, after: r.int(0, 8), limit: r.int(1, 5) };
      return {
        what: `readSession after ${request.after} limit ${request.limit}`,
        call: (target, seen) =>
          outcome(
            () => target.readSession(request),
            (result: EventPage) => page(result, seen),
          ),
      };
    }
    if (read === 2) {
      return {
        what: "runHead",
        call: (target) =>
          outcome(
            () => target.runHead(address),
            ({ lastHash: _hash, ...rest }: { lastHash: unknown }) => rest,
          ),
      };
    }
    if (read === 3)
      return {
        what: "listRuns",
        call: (target) => outcome(() => target.listRuns(sessionId), runs),
      };
    const limit = r.int(1, 2);
    return {
      what: `listSessions limit ${limit}`,
      call: (target) => outcome(() => target.listSessions({ limit }), sessions),
    };
  };

  for (let step = 0; step < STEPS; step++) {
    const next = await plan();
    const expected = await next.call(reference, aliases.reference);
    // Several handles on one database (processes): each step goes through any of them.
    const handle = handles.length === 1 ? store : r.pick(handles);
    const actual = await next.call(handle, aliases.store);
    assert.deepStrictEqual(
      actual,
      expected,
      `seed ${seed}, step ${step} (${next.what}): the store answered otherwise than the reference`,
    );
    const kind = answerKind(expected, next);
    seen.set(kind, (seen.get(kind) ?? 0) + 1);
    if (kind === "written" && next.batch !== undefined) {
      accepted.push(next.batch);
      for (const event of next.batch.events)
        stored.get(next.batch.sessionId)?.push({
          eventId: event.eventId as string,
          runId: next.batch.runId,
        });
    }
    if (kind === "deleted" && next.deleted !== undefined) {
      // Its batches are gone: a retry of one would be a new write, not a retry.
      const gone = next.deleted;
      forgotten.push(...accepted.filter((batch) => batch.sessionId === gone));
      accepted.splice(0, accepted.length, ...accepted.filter((batch) => batch.sessionId !== gone));
      stored.set(gone, []);
    }
    if (kind === "forked" && next.fork !== undefined) {
      forks++;
      const ids = runIds.get(next.fork.sessionId) ?? [];
      if (!ids.includes(next.fork.newRunId)) ids.push(next.fork.newRunId);
    }
  }

  for (const sessionId of sessionIds) {
    const all = await store.readSession({ sessionId });
    const expected = await reference.readSession({ sessionId });
    assert.deepStrictEqual(
      page(all, aliases.store),
      page(expected, aliases.reference),
      `seed ${seed}: readSession ${sessionId}`,
    );
    for (const runId of runIds.get(sessionId) ?? [])
      assertChain(`seed ${seed}: run ${runId}`, (await store.readRun({ sessionId, runId })).events);
  }
}

/**
 * Runs the seeded sequences against `handles` (one store, or several handles on one database,
 * as separate processes would have: each step goes through one of them) and the reference.
 */
export async function runAgainstReference(handles: EventStore[]): Promise<void> {
  const reference = new MemoryEventStore();
  const seen = new Map<string, number>();
  for (const seed of SEEDS) await sequence(handles, reference, seed, seen);
  await reference.close();
  // The sequences reach every answer (a generator that stopped doing so would pass idly).
  for (const kind of [
    "written",
    "deduplicated",
    "forked",
    "deleted",
    "read",
    "conflict",
    "duplicate-event",
    "run-closed",
    "delete: invalid-argument",
  ])
    assert.ok(
      (seen.get(kind) ?? 0) > 0,
      `no step was answered ${kind}: ${JSON.stringify([...seen])}`,
    );
}

export const modelCases: CaseFactory = (makeStore) => [
  {
    group: "against the reference",
    name: "a random sequence of appends, retries, forks, deletions and reads is answered as the memory store answers it",
    timeoutMs: 120_000,
    run: withStore(makeStore, (store) => runAgainstReference([store])),
  },
];
