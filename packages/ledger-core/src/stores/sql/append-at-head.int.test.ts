import { expect, it, vi } from "vitest";
import { type ConflictError, LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import type { LedgerEvent } from "../../events/types.js";
import type { EventStore } from "../../store/event-store.js";
import {
  appendAtOnce,
  describeEachKind,
  event,
  runsOf,
  startRuns,
  twoStoresWatched,
} from "./testing/cached-head-stores.js";
import { checkSession, sixteenWriters } from "./testing/shared-blob-writers.js";

// The one-round-trip append a SQL store uses when a writer continues the run where the store's
// own last append left it (a cached head). Several store instances on one database stand for
// several processes: each one's cache goes stale when another writes.

describeEachKind((kind) => {
  it("two stores writing one run alternately: each stale cache falls back, the chain is right", async () => {
    const { open } = await kind.database();
    const [a, b] = [await open(), await open()];
    const sessionId = `alt-${uuidv7()}`;
    const written: LedgerEvent[] = [];
    const first = await a.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [event("run.started")],
    });
    written.push(...first.events);
    for (let index = 1; index < 13; index++) {
      // Two appends in a row by one store (its cache is right), then the other store's turn.
      const writer = Math.floor(index / 2) % 2 === 0 ? a : b;
      const result = await writer.append({
        sessionId,
        runId: "r",
        expectedSeq: index,
        events: [event("x.step", index)],
      });
      expect(result.deduplicated).toBe(false);
      expect(result.events[0]?.seq).toBe(index);
      written.push(...result.events);
    }
    // A's cache says 12 (its last append), the run is at 13: a stale expectedSeq conflicts.
    const stale = await a
      .append({ sessionId, runId: "r", expectedSeq: 12, events: [event("x.late")] })
      .catch((error: unknown) => error);
    expect(LedgerError.isInstance(stale, "conflict")).toBe(true);
    expect((stale as ConflictError).actualSeq).toBe(13);
    await checkSession(a, sessionId, written);
  });

  it("a retry after an unknown outcome dedups, an id of another run is duplicate-event", async () => {
    const { open } = await kind.database();
    const [a, b] = [await open(), await open()];
    const sessionId = `retry-${uuidv7()}`;
    await a.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
    await a.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.one")] });
    // The batch was committed (here by B, as if A's connection died after the commit), A's
    // cached head still says 2: its retry finds the head moved and dedups.
    const batch = {
      sessionId,
      runId: "r",
      expectedSeq: 2,
      events: [
        { eventId: `e-${uuidv7()}`, type: "model.requested", payload: { n: 1 } },
        { eventId: `e-${uuidv7()}`, type: "model.completed", payload: { n: 2 } },
      ],
    } as const;
    const committed = await b.append(batch as never);
    const retried = await a.append(batch as never);
    expect(retried.deduplicated).toBe(true);
    expect(retried.events).toEqual(committed.events);
    // A is at the head again (its cache was dropped): the fast path writes the next batch.
    const next = await a.append({
      sessionId,
      runId: "r",
      expectedSeq: 4,
      events: [event("x.next")],
    });
    expect(next.events[0]?.commitCursor).toBe(5);
    // An id stored in another run of the session fails the one statement on the unique index;
    // the full check names it.
    await a.append({ sessionId, runId: "s", expectedSeq: 0, events: [event("run.started")] });
    const clash = await a
      .append({
        sessionId,
        runId: "r",
        expectedSeq: 5,
        events: [{ eventId: batch.events[0].eventId, type: "x.clash", payload: null } as never],
      })
      .catch((error: unknown) => error);
    expect(LedgerError.isInstance(clash, "duplicate-event")).toBe(true);
    expect((await a.runHead({ sessionId, runId: "r" })).length).toBe(5);
    await checkSession(a, sessionId, [...committed.events, ...next.events]);
  });

  it("a run closed by another store is run-closed, not written", async () => {
    const { open } = await kind.database();
    const [a, b] = [await open(), await open()];
    const sessionId = `closed-${uuidv7()}`;
    await a.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
    await b.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("run.completed")] });
    const error = await a
      .append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.after")] })
      .catch((failure: unknown) => failure);
    // The head moved (length 2): conflict is checked after the closed status.
    expect(LedgerError.isInstance(error, "run-closed")).toBe(true);
    expect((await a.runHead({ sessionId, runId: "r" })).length).toBe(2);
  });

  it("a runs row without its session row: the one statement never moves the head alone", async () => {
    const database = await kind.database();
    const store = await database.open();
    const sessionId = `orphan-${uuidv7()}`;
    await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
    await store.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.one")] });
    await database.deleteSessionRow(sessionId);
    // The store's cached head is right (2), so the one-statement path is tried first. The
    // outcome of the fallback on a damaged store does not matter here: what must hold is that
    // the head never counts an event that was not stored.
    await store
      .append({ sessionId, runId: "r", expectedSeq: 2, events: [event("x.two")] })
      .catch(() => undefined);
    const head = await store.runHead({ sessionId, runId: "r" });
    const stored = await store.readRun({ sessionId, runId: "r" });
    expect(head.length).toBe(stored.events.length);
    expect(head.lastHash).toBe(stored.events[stored.events.length - 1]?.hash);
  });

  it("cursors stay gap-free and in commit order with concurrent writers on one session", async () => {
    const { open } = await kind.database();
    const stores = [await open(), await open(), await open()];
    const sessionId = `order-${uuidv7()}`;
    const written: LedgerEvent[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, writer) => {
        const store = stores[writer % stores.length] as EventStore;
        const runId = `run-${writer}`;
        let length = 0;
        for (let index = 0; index < 15; index++) {
          const batch = [event(index === 0 ? "run.started" : "x.step", index), event("x.more")];
          const result = await store.append({
            sessionId,
            runId,
            expectedSeq: length,
            events: batch.slice(0, index % 3 === 0 ? 1 : 2),
          });
          length += result.events.length;
          written.push(...result.events);
        }
      }),
    );
    await checkSession(stores[0] as EventStore, sessionId, written);
    expect(written.map((mine) => mine.commitCursor).sort((x, y) => x - y)).toEqual(
      Array.from({ length: written.length }, (_, index) => index + 1),
    );
  });

  it("one store gathers concurrent appends of a session into one statement, each answered as alone", async () => {
    const { name, open } = await kind.database();
    const spy = vi.spyOn(kind.backend.prototype, "appendAtHeads");
    try {
      const store = await open();
      // Eight runs over two sessions, each a writer appending as fast as it is answered.
      const writers = Array.from({ length: 8 }, (_, writer) => ({
        sessionId: `group-${writer % 2}-${name}`,
        runId: `run-${writer}`,
        length: 0,
      }));
      const written: LedgerEvent[] = [];
      for (const writer of writers) {
        const result = await store.append({
          sessionId: writer.sessionId,
          runId: writer.runId,
          expectedSeq: 0,
          events: [event("run.started")],
        });
        writer.length = 1;
        written.push(...result.events);
      }
      await Promise.all(
        writers.map(async (writer, index) => {
          for (let step = 0; step < 12; step++) {
            // Batches of one to three events, so statements carry appends of several sizes.
            const count = 1 + ((index + step) % 3);
            const result = await store.append({
              sessionId: writer.sessionId,
              runId: writer.runId,
              expectedSeq: writer.length,
              events: Array.from({ length: count }, (_, k) => event("x.step", [step, k])),
            });
            expect(result.deduplicated).toBe(false);
            expect(result.events.map((stored) => stored.seq)).toEqual(
              Array.from({ length: count }, (_, k) => writer.length + k),
            );
            writer.length += count;
            written.push(...result.events);
          }
        }),
      );
      const batched = spy.mock.calls.filter(([appends]) => appends.length > 1);
      expect(batched.length).toBeGreaterThan(0);
      const sessionsPerStatement = spy.mock.calls.map(
        ([appends]) => new Set(appends.map((append) => append.sessionId)).size,
      );
      // PostgreSQL gathers per session (sessions never wait for each other); MariaDB gathers
      // the whole store's appends, one counter bump per session in the statement.
      if (kind.acrossSessions) expect(Math.max(...sessionsPerStatement)).toBe(2);
      else expect(Math.max(...sessionsPerStatement)).toBe(1);
      for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
        const mine = written.filter((stored) => stored.sessionId === sessionId);
        await checkSession(store, sessionId, mine);
        expect((await store.readSession({ sessionId })).events).toHaveLength(mine.length);
      }
    } finally {
      spy.mockRestore();
    }
  });

  // Only where one statement carries several sessions (MariaDB).
  if (kind.acrossSessions) {
    it("statements of several sessions from two stores at once: no deadlock, no gap, nothing lost", async () => {
      await twoStoresWatched(kind, async (a, b, spy, database) => {
        const stores = [a, b];
        const writers = sixteenWriters(stores, `across-${database}`);
        const written: LedgerEvent[] = [];
        await Promise.all(
          writers.map(async (writer) => {
            for (let step = 0; step < 15; step++) {
              const result = await writer.store.append({
                sessionId: writer.sessionId,
                runId: writer.runId,
                expectedSeq: step,
                events: [event(step === 0 ? "run.started" : "x.step", step)],
              });
              expect(result.deduplicated).toBe(false);
              written.push(...result.events);
            }
          }),
        );
        const sessions = spy.mock.calls.map(
          ([appends]) => new Set(appends.map((append) => append.sessionId)).size,
        );
        expect(Math.max(...sessions)).toBeGreaterThan(1);
        for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
          const mine = written.filter((stored) => stored.sessionId === sessionId);
          expect(mine).toHaveLength(60);
          await checkSession(stores[0] as EventStore, sessionId, mine);
        }
      });
    });

    it("in one statement of several sessions, a stale head or a clashing id answers for itself", async () => {
      await twoStoresWatched(kind, async (a, b, spy) => {
        // Nine, so that statements carry several appends however the store shares them out.
        const sessions = Array.from({ length: 9 }, (_, index) => `s${index}-${uuidv7()}`);
        const others = (skip: number) =>
          sessions.flatMap((_, index) => (index === skip ? [] : [index]));
        const gathered = (index: number) =>
          spy.mock.calls.some(
            ([appends]) =>
              appends.length > 1 && appends.some((append) => append.sessionId === sessions[index]),
          );
        const written = await startRuns(
          a,
          sessions.map((sessionId) => ({ sessionId, runId: "r" })),
        );
        // B moves the run of s2: A's cached head for it is stale.
        const moved = await b.append({
          sessionId: sessions[2] as string,
          runId: "r",
          expectedSeq: 1,
          events: [event("x.b")],
        });
        written.push(...moved.events);
        const round = (events: (index: number) => unknown[], expectedSeq: number) =>
          appendAtOnce(
            a,
            sessions.map((sessionId, index) => ({
              sessionId,
              runId: "r",
              expectedSeq,
              events: events(index) as never,
            })),
            written,
          );
        const first = await round((index) => [event("x.one", index)], 1);
        expect(gathered(2)).toBe(true);
        expect(LedgerError.isInstance(first[2], "conflict")).toBe(true);
        for (const index of others(2)) expect(first[index]).toMatchObject({ deduplicated: false });
        // An id already stored in s3 fails the statement on its unique index; each append is
        // then written (or refused) on its own.
        const taken = written[3]?.eventId as string;
        spy.mockClear();
        const second = await round(
          (index) => [
            index === 3
              ? { eventId: taken, type: "x.clash", payload: null }
              : event("x.two", index),
          ],
          2,
        );
        expect(gathered(3)).toBe(true);
        expect(LedgerError.isInstance(second[3], "duplicate-event")).toBe(true);
        for (const index of others(3)) expect(second[index]).toMatchObject({ deduplicated: false });
        for (const sessionId of sessions) {
          const mine = written.filter((stored) => stored.sessionId === sessionId);
          await checkSession(a, sessionId, mine);
          expect((await a.readSession({ sessionId })).events).toHaveLength(mine.length);
        }
      });
    });
  }

  it("in one statement, a stale head or a clashing id answers for itself, the others are written", async () => {
    await twoStoresWatched(kind, async (a, b, spy) => {
      const sessionId = `mixed-${uuidv7()}`;
      // Nine, so that statements carry several appends however the store shares them out.
      const runs = Array.from({ length: 9 }, (_, index) => `r${index}`);
      const others = (skip: number) => runs.flatMap((_, index) => (index === skip ? [] : [index]));
      const gathered = (runId: string) =>
        spy.mock.calls.some(
          ([appends]) => appends.length > 1 && appends.some((append) => append.runId === runId),
        );
      const written = await startRuns(a, runsOf(sessionId, runs));
      // B moves r3: A's cached head for it is stale.
      written.push(
        ...(await b.append({ sessionId, runId: "r3", expectedSeq: 1, events: [event("x.b")] }))
          .events,
      );
      const round = (
        events: (runId: string) => unknown[],
        expectedSeq: (runId: string) => number,
      ) =>
        // Submitted in one tick: the first starts at once, the others go out in statements of
        // several appends at the end of the tick.
        appendAtOnce(
          a,
          runs.map((runId) => ({
            sessionId,
            runId,
            expectedSeq: expectedSeq(runId),
            events: events(runId) as never,
          })),
          written,
        );
      const first = await round(
        (runId) => [event("x.one", runId)],
        () => 1,
      );
      expect(gathered("r3")).toBe(true);
      expect(LedgerError.isInstance(first[3], "conflict")).toBe(true);
      expect((first[3] as ConflictError).actualSeq).toBe(2);
      for (const index of others(3)) expect(first[index]).toMatchObject({ deduplicated: false });
      // An id already stored in the session fails the whole statement on its unique index;
      // each append is then written (or refused) on its own. (r3's conflict dropped A's cached
      // head for it: r3 takes the transactional path, r0 starts alone, and r2 goes out with
      // others.)
      const taken = written[0]?.eventId as string;
      spy.mockClear();
      const second = await round(
        (runId) => [
          runId === "r2"
            ? { eventId: taken, type: "x.clash", payload: null }
            : event("x.two", runId),
        ],
        () => 2,
      );
      expect(gathered("r2")).toBe(true);
      expect(LedgerError.isInstance(second[2], "duplicate-event")).toBe(true);
      for (const index of others(2)) expect(second[index]).toMatchObject({ deduplicated: false });
      await checkSession(a, sessionId, written);
      expect((await a.readSession({ sessionId })).events).toHaveLength(written.length);
      expect((await a.runHead({ sessionId, runId: "r2" })).length).toBe(2);
    });
  });
});
