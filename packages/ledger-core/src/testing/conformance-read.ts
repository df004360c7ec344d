import assert from "node:assert/strict";
import { compareIds, uuidv7 } from "../events/ids.js";
import type { JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { RunSummary } from "../store/event-store.js";
import {
  allSessions,
  assertChain,
  assertCursors,
  assertIsoTime,
  type CaseFactory,
  freshAddress,
  freshId,
  note,
  readAll,
  readSessionAll,
  started,
  withStore,
} from "./conformance-helpers.js";

function byRunId(a: RunSummary, b: RunSummary): number {
  return a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}

/** Strings that break naive storage: NUL, separators, surrogate pairs, combining marks, RTL. */
function unicodePayload(): JsonValue {
  const keys = JSON.parse('{"__proto__": {"not": "a prototype"}, "constructor": 1}') as JsonValue;
  return {
    emoji: "👩‍👩‍👧‍👦 🎉 😀",
    combining: "e\u0301 n\u0303 Å",
    rtl: "שלום مرحبا \u202eabc\u202c",
    nul: "a\u0000b\u0000",
    separators: "line\u2028para\u2029end",
    bom: "\ufeffstart",
    astral: "𝄞 𠜎",
    escapes: '"\\/\b\f\n\r\t\u001f\u007f\u0085',
    keys: {
      é: 1,
      "e\u0301": 2,
      "😀": 3,
      "\ufb33": 4,
      "": 5,
      "a b": 6,
      "\u0000": 7,
      "10": 8,
      "9": 9,
    },
    special: keys,
    "key with \u2028": ["\u0000", "", "\ud83d\ude00"],
  };
}

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
  {
    group: "read",
    name: "unicode strings, odd keys and opaque ids round trip exactly",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = {
        sessionId: `${freshId("séance")}/😀'; DROP TABLE events; --`,
        runId: `run:{*}?"\\%_ \u05e9\u0301`,
      };
      const events: NewEvent[] = [
        started({ stepId: "step ☃ \u2028", actor: { type: "agent", id: "ág€nt" } }),
        { eventId: `evt-${uuidv7()}-🎉`, type: "x.unicode", payload: unicodePayload() },
        note(unicodePayload(), { metadata: { note: "\u0000\u2028😀" } }),
        { eventId: uuidv7(), type: "x.long-id", stepId: "s".repeat(255) },
      ];
      const result = await store.append({ ...address, expectedSeq: 0, events });
      const read = await readAll(store, address);
      assert.deepStrictEqual(read, result.events);
      for (const [index, event] of read.entries()) {
        assert.deepStrictEqual(event.payload, events[index]?.payload ?? null, `payload ${index}`);
      }
      assert.equal(read[1]?.eventId, events[1]?.eventId);
      assert.equal(read[3]?.stepId, "s".repeat(255));
      assertChain("unicode run", read);
      assert.deepStrictEqual(await readSessionAll(store, address.sessionId), result.events);
      const listed = (await allSessions(store)).map((session) => session.sessionId);
      assert.ok(listed.includes(address.sessionId), "listSessions keeps the id verbatim");
      assert.deepStrictEqual(
        (await store.listRuns(address.sessionId)).map((run) => run.runId),
        [address.runId],
      );
    }),
  },
  {
    group: "read",
    name: "a 1 MiB string payload round trips",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const big = ("x".repeat(1023) + "€").repeat(1024);
      const mixed = "😀é\u0000".repeat(1000);
      const events = [started(), note({ big, mixed }), note("after")];
      const result = await store.append({ ...address, expectedSeq: 0, events });
      const read = await readAll(store, address);
      assert.deepStrictEqual(read, result.events);
      const payload = read[1]?.payload as { value: { big: string; mixed: string } };
      assert.equal(payload.value.big.length, 1024 * 1024);
      assert.equal(payload.value.big, big);
      assert.equal(payload.value.mixed, mixed);
      assertChain("big run", read);
      const page = await store.readSession({ sessionId: address.sessionId, after: 1, limit: 1 });
      assert.deepStrictEqual(page.events, [read[1]]);
    }),
  },
  {
    group: "read",
    name: "ids of the longest allowed length, in multibyte characters, work in every id field",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      // 255 UTF-16 code units (§6) is up to 765 UTF-8 bytes ("€") or 127 astral characters:
      // every column, key and index that holds an id must take that much.
      const longest = (unit: string, unique: string) => {
        const fill = 255 - unique.length;
        return (
          unit.repeat(Math.floor(fill / unit.length)) + "x".repeat(fill % unit.length) + unique
        );
      };
      const address = {
        sessionId: longest("€", uuidv7()),
        runId: longest("😀", uuidv7()),
      };
      const child = { sessionId: address.sessionId, runId: longest("é", uuidv7()) };
      for (const id of [address.sessionId, address.runId, child.runId])
        assert.equal(id.length, 255);
      const stepId = longest("€", "");
      const first = await store.append({
        ...address,
        expectedSeq: 0,
        events: [
          { ...started(), eventId: longest("€", uuidv7()), stepId, attemptId: longest("😀", "") },
          {
            ...note("long ids"),
            type: `x.${"€".repeat(253)}`,
            eventId: longest("😀", uuidv7()),
            retryOf: longest("é", ""),
            causedByEventId: longest("€", "c"),
            actor: { type: "tool", id: longest("😀", "a"), framework: longest("€", "f") },
          },
        ],
      });
      const second = await store.append({
        ...child,
        expectedSeq: 0,
        events: [{ ...started(), parentRunId: address.runId }],
      });
      assert.deepStrictEqual(await readAll(store, address), first.events);
      assert.deepStrictEqual(await readAll(store, child), second.events);
      assertChain("long ids", first.events);
      assert.deepStrictEqual(await readSessionAll(store, address.sessionId), [
        ...first.events,
        ...second.events,
      ]);
      const runs = (await store.listRuns(address.sessionId)).sort(byRunId);
      assert.deepStrictEqual(
        runs.map((run) => [run.runId, run.parentRunId]),
        [
          [address.runId, undefined],
          [child.runId, address.runId],
        ].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1)),
      );
      assert.ok(
        (await allSessions(store)).some((session) => session.sessionId === address.sessionId),
        "listSessions lists the session by its long id",
      );
      const retry = await store.append({
        ...address,
        expectedSeq: 0,
        events: first.events.map((event) => ({
          eventId: event.eventId,
          type: event.type,
          ...(event.stepId ? { stepId: event.stepId } : {}),
          ...(event.attemptId ? { attemptId: event.attemptId } : {}),
          ...(event.retryOf ? { retryOf: event.retryOf } : {}),
          ...(event.causedByEventId ? { causedByEventId: event.causedByEventId } : {}),
          ...(event.actor ? { actor: event.actor } : {}),
          payload: event.payload,
        })),
      });
      assert.equal(retry.deduplicated, true, "a retry finds the stored events by their long ids");
      const fork = await store.fork({ ...address, newRunId: longest("€", uuidv7()), uptoSeq: 2 });
      assert.equal(fork.events.length, 2);
    }),
  },
  {
    group: "read",
    name: "payload and metadata read back verbatim, keys in the order they were written",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      // §3: metadata is stored verbatim; a jsonb column or a sorted encoding would reorder keys
      // (deepStrictEqual does not see it, a host diffing exported JSON does).
      const address = freshAddress();
      const payload = { zebra: 1, apple: { z: [{ y: 1, b: 2 }], a: null }, Mid: "m", _: true };
      const metadata = { trace: { spanId: "s", parent: "p" }, b: 2, a: 1 };
      const given = [started(), note(payload, { metadata })];
      const appended = await store.append({ ...address, expectedSeq: 0, events: given });
      const read = await readAll(store, address);
      const session = await readSessionAll(store, address.sessionId);
      for (const [label, events] of [
        ["append", appended.events],
        ["readRun", read],
        ["readSession", session],
      ] as const) {
        assert.equal(
          JSON.stringify(events[1]?.payload),
          JSON.stringify({ value: payload }),
          `${label}: payload keys in written order`,
        );
        assert.equal(
          JSON.stringify(events[1]?.metadata),
          JSON.stringify(metadata),
          `${label}: metadata keys in written order`,
        );
      }
    }),
  },
];
