import assert from "node:assert/strict";
import { type ConflictError, LedgerError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import type { AppendResult, EventStore } from "../store/event-store.js";
import {
  appendWithRetry,
  assertChain,
  assertCursors,
  type CaseFactory,
  freshAddress,
  freshId,
  note,
  readAll,
  readSessionAll,
  started,
  withStore,
  yieldTurn,
} from "./conformance-helpers.js";

/** Asserts every event an append reported is stored exactly as reported (none silently lost). */
function assertReportedAreStored(reported: LedgerEvent[], stored: LedgerEvent[]): void {
  const byId = new Map(stored.map((event) => [event.eventId, event]));
  assert.equal(byId.size, stored.length, "an eventId is stored twice");
  for (const event of reported) {
    assert.deepStrictEqual(byId.get(event.eventId), event, `event ${event.eventId} as reported`);
  }
}

async function raceAt(
  store: EventStore,
  address: { sessionId: string; runId: string },
  at: number,
) {
  const contenders = [0, 1, 2].map((index) => [note(`contender ${index}`), note(index)]);
  const outcomes = await Promise.allSettled(
    contenders.map((events) => store.append({ ...address, expectedSeq: at, events })),
  );
  const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
  assert.equal(winners.length, 1, `exactly one append at seq ${at} may win`);
  for (const outcome of outcomes) {
    if (outcome.status === "fulfilled") continue;
    const error = outcome.reason as unknown;
    assert.ok(LedgerError.isInstance(error, "conflict"), `a loser must get conflict: ${error}`);
    assert.equal((error as ConflictError).actualSeq, at + 2, "the loser sees the winner's length");
  }
  const won = (winners[0] as PromiseFulfilledResult<AppendResult>).value;
  assert.equal(won.deduplicated, false);
  return won.events;
}

export const concurrencyCases: CaseFactory = (makeStore) => [
  {
    group: "concurrency",
    name: "concurrent appends at one position: exactly one wins, the others conflict",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const first = await raceAt(store, address, 0);
      const second = await raceAt(store, address, 2);
      const all = await readAll(store, address);
      assert.deepStrictEqual(all, [...first, ...second]);
      assertChain("run", all);
      assertCursors("session", await readSessionAll(store, address.sessionId));
    }),
  },
  {
    group: "concurrency",
    name: "a retry racing its own original is stored once; one result is deduplicated",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      await store.append({ ...address, expectedSeq: 0, events: [started()] });
      const batch = [note("racing"), note("retry")];
      const results = await Promise.all([
        store.append({ ...address, expectedSeq: 1, events: batch }),
        store.append({ ...address, expectedSeq: 1, events: batch }),
      ]);
      assert.deepStrictEqual(
        results.map((result) => result.deduplicated).sort(),
        [false, true],
        "one writes, the other finds it stored",
      );
      assert.deepStrictEqual(results[0]?.events, results[1]?.events);
      const all = await readAll(store, address);
      assert.equal(all.length, 3);
      assertReportedAreStored(results[0]?.events ?? [], all);
    }),
  },
  {
    group: "concurrency",
    name: "many writers retrying on conflict: every event once, seq contiguous",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const writers = 5;
      const perWriter = 10;
      const reported: LedgerEvent[] = [];
      let conflicts = 0;
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          const state = { expectedSeq: 0, conflicts: 0 };
          for (let index = 0; index < perWriter; index++) {
            const events = [note({ writer, index })];
            reported.push(...(await appendWithRetry(store, address, events, state)));
          }
          conflicts += state.conflicts;
        }),
      );
      const all = await readAll(store, address);
      assert.equal(all.length, writers * perWriter);
      assertChain("run", all);
      assertReportedAreStored(reported, all);
      for (let writer = 0; writer < writers; writer++) {
        const order = all
          .map((event) => event.payload as { value: { writer: number; index: number } })
          .filter((payload) => payload.value.writer === writer)
          .map((payload) => payload.value.index);
        assert.deepStrictEqual(order, [...Array(perWriter).keys()], `writer ${writer} in order`);
      }
      assertCursors("session", await readSessionAll(store, address.sessionId));
      assert.ok(conflicts <= writers * perWriter * writers, "conflicts stay bounded");
    }),
  },
  {
    group: "concurrency",
    name: "writers on separate runs of one session: all succeed, cursors gap-free",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const sessionId = freshId("session");
      const reported: LedgerEvent[] = [];
      const runs = Array.from({ length: 5 }, (_, index) => ({ sessionId, runId: `run-${index}` }));
      await Promise.all(
        runs.map(async (address) => {
          for (let seq = 0; seq < 10; seq += 2) {
            const result = await store.append({
              ...address,
              expectedSeq: seq,
              events: [note(seq), note(seq + 1)],
            });
            reported.push(...result.events);
            await yieldTurn();
          }
        }),
      );
      const session = await readSessionAll(store, sessionId);
      assert.equal(session.length, 50);
      assertCursors("session", session);
      assertReportedAreStored(reported, session);
      for (const address of runs) assertChain(address.runId, await readAll(store, address));
    }),
  },
  {
    group: "concurrency",
    name: "a reader tailing readSession sees every event once, in cursor order, while writers commit",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const sessionId = freshId("session");
      const shared = { sessionId, runId: "shared" };
      let writing = true;
      let readerFailed = false;
      const writer = async (runId: string, batches: number, retry: boolean) => {
        const state = { expectedSeq: 0, conflicts: 0 };
        for (let index = 0; index < batches && !readerFailed; index++) {
          const events = Array.from({ length: (index % 3) + 1 }, () => note({ runId, index }));
          if (retry) await appendWithRetry(store, shared, events, state);
          else {
            const result = await store.append({
              sessionId,
              runId,
              expectedSeq: state.expectedSeq,
              events,
            });
            state.expectedSeq += result.events.length;
          }
          await yieldTurn();
        }
      };
      const seen: LedgerEvent[] = [];
      const reader = async () => {
        let after = 0;
        for (let polls = 0; polls < 100_000; polls++) {
          const done = !writing;
          const page = await store.readSession({ sessionId, after, limit: 7 });
          assert.ok(page.events.length <= 7, "limit respected");
          page.events.forEach((event, index) => {
            assert.equal(event.commitCursor, after + index + 1, "no cursor skipped or repeated");
          });
          seen.push(...page.events);
          const last = page.events[page.events.length - 1];
          assert.equal(page.nextCursor, last?.commitCursor ?? after, "nextCursor");
          after = page.nextCursor;
          if (page.events.length === 0) {
            if (done) return;
            await yieldTurn();
          }
        }
        assert.fail("reader did not finish");
      };
      const reading = reader().catch((error: unknown) => {
        readerFailed = true; // stop the writers, then report
        throw error;
      });
      reading.catch(() => undefined); // observed by the await below
      await Promise.all([
        writer("a", 6, false),
        writer("b", 6, false),
        writer("c", 6, false),
        writer("shared", 5, true),
        writer("shared", 5, true),
      ]).finally(() => {
        writing = false;
      });
      await reading;
      const all = await readSessionAll(store, sessionId);
      assert.deepStrictEqual(seen, all, "the tail saw exactly the stored session");
      assert.equal(new Set(all.map((event) => event.eventId)).size, all.length);
      assertCursors("session", all);
      assertChain("shared", await readAll(store, shared));
    }),
  },
  {
    group: "concurrency",
    name: "forks and first appends racing to create one run: exactly one makes it, the others conflict",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      for (let round = 0; round < 6; round++) {
        const source = freshAddress();
        await store.append({
          ...source,
          expectedSeq: 0,
          events: [started(), note("a"), note("b")],
        });
        const target = { sessionId: source.sessionId, runId: freshId("contested") };
        const contenders: (() => Promise<AppendResult>)[] = [
          () => store.fork({ ...source, newRunId: target.runId, uptoSeq: 2 }),
          () => store.append({ ...target, expectedSeq: 0, events: [started(), note(round)] }),
          () => store.fork({ ...source, newRunId: target.runId, uptoSeq: 3 }),
          () => store.append({ ...target, expectedSeq: 0, events: [started()] }),
        ];
        // Started in an order that turns each round, so every kind of contender gets to lead.
        const order = contenders.map((_, index) => (index + round) % contenders.length);
        const outcomes = await Promise.allSettled(
          order.map((index) => (contenders[index] as () => Promise<AppendResult>)()),
        );
        const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
        assert.equal(winners.length, 1, `round ${round}: exactly one may create the run`);
        for (const outcome of outcomes) {
          if (outcome.status === "fulfilled") continue;
          const error = outcome.reason as unknown;
          assert.ok(
            LedgerError.isInstance(error, "conflict"),
            `round ${round}: a loser must get conflict: ${error}`,
          );
        }
        const won = (winners[0] as PromiseFulfilledResult<AppendResult>).value;
        const run = await readAll(store, target);
        assert.deepStrictEqual(run, won.events, `round ${round}: the run is the winner's events`);
        assertChain(`round ${round}`, run);
        assertCursors("session", await readSessionAll(store, source.sessionId));
        assert.equal((await store.listRuns(source.sessionId)).length, 2);
      }
    }),
  },
];
