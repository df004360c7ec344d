import assert from "node:assert/strict";
import { compareIds, uuidv7 } from "../events/ids.js";
import type { LedgerEvent } from "../events/types.js";
import type { RunSummary } from "../store/event-store.js";
import {
  allSessions,
  assertChain,
  assertCursors,
  assertIsoTime,
  byRunId,
  type CaseFactory,
  freshId,
  note,
  readAll,
  readSessionAll,
  started,
  withStore,
} from "./conformance-helpers.js";

export const readCases: CaseFactory = (makeStore) => [
  {
    group: "read",
    name: "readSession returns commit order across runs, paged by cursor",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const sessionId = freshId("session");
      const runs = ["r1", "r2", "r3"].map((runId) => ({ sessionId, runId }));
      const order: LedgerEvent[] = [];
      const seqs = [0, 0, 0];
      // Interleave batches of different sizes across the three runs.
      for (const [run, size] of [
        [0, 2],
        [1, 1],
        [0, 1],
        [2, 3],
        [1, 2],
        [2, 1],
        [0, 1],
      ] as const) {
        const address = runs[run] as { sessionId: string; runId: string };
        const events = Array.from({ length: size }, (_, index) => note({ run, index }));
        const result = await store.append({ ...address, expectedSeq: seqs[run] as number, events });
        seqs[run] = (seqs[run] as number) + size;
        order.push(...result.events);
      }
      const all = await readSessionAll(store, sessionId);
      assert.deepStrictEqual(all, order, "readSession is in commit order");
      assertCursors("session", all);
      for (const limit of [1, 2, 3, 5]) {
        const paged: LedgerEvent[] = [];
        let after = 0;
        for (;;) {
          const page = await store.readSession({ sessionId, after, limit });
          assert.ok(page.events.length <= limit, `limit ${limit}`);
          if (page.events.length === 0) {
            assert.equal(page.nextCursor, after, "an empty page keeps the cursor");
            break;
          }
          assert.equal(page.nextCursor, page.events[page.events.length - 1]?.commitCursor);
          paged.push(...page.events);
          after = page.nextCursor;
        }
        assert.deepStrictEqual(paged, order, `paged by ${limit}`);
      }
      assert.deepStrictEqual(await store.readSession({ sessionId, after: 4, limit: 3 }), {
        events: order.slice(4, 7),
        nextCursor: 7,
      });
      assert.deepStrictEqual(await store.readSession({ sessionId, after: order.length + 5 }), {
        events: [],
        nextCursor: order.length + 5,
      });
      for (const address of runs) {
        const events = await readAll(store, address);
        assertChain(address.runId, events);
        assert.deepStrictEqual(
          events,
          order.filter((event) => event.runId === address.runId),
        );
      }
    }),
  },
  {
    group: "read",
    name: "listRuns reports status, length, head hash and parentRunId",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const sessionId = freshId("session");
      const parent = { sessionId, runId: "parent" };
      const parentEvents = await store.append({
        ...parent,
        expectedSeq: 0,
        events: [started(), note(1)],
      });
      const causedBy = parentEvents.events[1]?.eventId as string;
      const expected: RunSummary[] = [];
      const last = (events: LedgerEvent[]) => events[events.length - 1] as LedgerEvent;
      const child = await store.append({
        sessionId,
        runId: "child",
        expectedSeq: 0,
        events: [started({ parentRunId: "parent", causedByEventId: causedBy }), note("child")],
      });
      expected.push({
        runId: "child",
        parentRunId: "parent",
        length: 2,
        status: "running",
        lastHash: last(child.events).hash,
        startedAt: child.events[0]?.recordedAt as string,
      });
      for (const terminal of ["completed", "failed", "cancelled"] as const) {
        const address = { sessionId, runId: `run-${terminal}` };
        const result = await store.append({
          ...address,
          expectedSeq: 0,
          events: [started(), note(terminal), { eventId: uuidv7(), type: `run.${terminal}` }],
        });
        expected.push({
          runId: address.runId,
          length: 3,
          status: terminal,
          lastHash: last(result.events).hash,
          startedAt: result.events[0]?.recordedAt as string,
        });
        assert.deepStrictEqual(await store.runHead(address), {
          exists: true,
          length: 3,
          status: terminal,
          lastHash: last(result.events).hash,
        });
      }
      expected.push({
        runId: "parent",
        length: 2,
        status: "running",
        lastHash: last(parentEvents.events).hash,
        startedAt: parentEvents.events[0]?.recordedAt as string,
      });
      const runs = (await store.listRuns(sessionId)).sort(byRunId);
      assert.deepStrictEqual(runs, expected.sort(byRunId));
      for (const run of runs) assertIsoTime(`${run.runId} startedAt`, run.startedAt);
      assert.deepStrictEqual(await store.listRuns(freshId("session")), []);
    }),
  },
  {
    group: "read",
    name: "listRuns lists a session's runs in the order they were created, whatever their ids and later writes",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const sessionId = freshId("session");
      // Created in an order that is neither the ids' nor the reverse; the first written to
      // again after the others (a database may list the row it rewrote last).
      const created = ["r-mid", "r-zeta", "r-alpha"];
      for (const runId of created)
        await store.append({ sessionId, runId, expectedSeq: 0, events: [started()] });
      await store.append({ sessionId, runId: "r-mid", expectedSeq: 1, events: [note("again")] });
      await store.append({ sessionId, runId: "r-0", expectedSeq: 0, events: [started()] });
      assert.deepStrictEqual(
        (await store.listRuns(sessionId)).map((run) => run.runId),
        [...created, "r-0"],
      );
    }),
  },
  {
    group: "read",
    name: "listSessions pages by id with after and limit",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const prefix = freshId("page");
      const ids = [3, 1, 5, 2, 4].map((index) => `${prefix}-p${index}`);
      for (const [index, sessionId] of ids.entries()) {
        const events = Array.from({ length: index + 1 }, (_, n) => note(n));
        await store.append({ sessionId, runId: "run", expectedSeq: 0, events });
      }
      const sorted = [...ids].sort(compareIds);
      const first = await store.listSessions({ after: prefix, limit: 2 });
      assert.deepStrictEqual(
        first.sessions.map((session) => session.sessionId),
        sorted.slice(0, 2),
      );
      assert.equal(first.nextCursor, sorted[1]);
      const second = await store.listSessions({ after: first.nextCursor as string, limit: 2 });
      assert.deepStrictEqual(
        second.sessions.map((session) => session.sessionId),
        sorted.slice(2, 4),
      );
      assert.equal(second.nextCursor, sorted[3]);
      const exact = await store.listSessions({ after: sorted[2] as string, limit: 2 });
      assert.deepStrictEqual(
        exact.sessions.map((session) => session.sessionId),
        sorted.slice(3, 5),
      );
      assert.equal(exact.nextCursor, undefined, "no nextCursor on the last page");
      assert.equal("nextCursor" in exact, false, "nextCursor is absent, not undefined");
      const all = await allSessions(store, 2);
      const listed = all.map((session) => session.sessionId);
      assert.deepStrictEqual(listed, [...listed].sort(compareIds), "sessions sorted by id");
      assert.equal(new Set(listed).size, listed.length, "no session twice");
      assert.deepStrictEqual(
        listed.filter((id) => id.startsWith(prefix)),
        sorted,
      );
      for (const session of all.filter((item) => item.sessionId.startsWith(prefix))) {
        const created = ids.indexOf(session.sessionId) + 1;
        assert.equal(session.eventCount, created, `${session.sessionId} eventCount`);
        assertIsoTime("createdAt", session.createdAt);
        assertIsoTime("updatedAt", session.updatedAt);
        assert.ok(session.createdAt <= session.updatedAt, "createdAt <= updatedAt");
        assert.deepStrictEqual(Object.keys(session).sort(), [
          "createdAt",
          "eventCount",
          "sessionId",
          "updatedAt",
        ]);
      }
    }),
  },
  {
    group: "read",
    name: "listSessions orders ids by code point (UTF-8 bytes), above U+FFFF too",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const prefix = freshId("order");
      // UTF-16 units would put U+1F600 (0xD83D 0xDE00) before U+FF61 and U+E000.
      const ids = ["\u{1F600}", "\uFF61", "\uE000", "\u00e9", "z", "\uD7FF", "\u{10FFFF}"].map(
        (tail) => `${prefix}-${tail}`,
      );
      for (const sessionId of ids)
        await store.append({ sessionId, runId: "run", expectedSeq: 0, events: [note(sessionId)] });
      const expected = ids
        .map((id) => ({ id, bytes: Buffer.from(id, "utf8") }))
        .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
        .map((item) => item.id);
      const mine = (sessions: { sessionId: string }[]) =>
        sessions.map((session) => session.sessionId).filter((id) => id.startsWith(prefix));
      assert.deepStrictEqual(mine(await allSessions(store, 2)), expected, "paged by 2");
      assert.deepStrictEqual(mine((await store.listSessions()).sessions), expected, "one page");
      for (const [index, after] of expected.entries()) {
        const page = await store.listSessions({ after, limit: 2 });
        assert.deepStrictEqual(
          mine(page.sessions),
          expected.slice(index + 1, index + 3),
          `after ${JSON.stringify(after)}`,
        );
      }
    }),
  },
];
