import assert from "node:assert/strict";
import { uuidv7 } from "../events/ids.js";
import type { JsonValue } from "../events/json.js";
import type { NewEvent } from "../events/types.js";
import {
  allSessions,
  assertChain,
  byRunId,
  type CaseFactory,
  freshAddress,
  freshId,
  note,
  readAll,
  readSessionAll,
  started,
  withStore,
} from "./conformance-helpers.js";

/**
 * What a store gives back must be what it was given: strings and keys of every kind, large
 * payloads, ids at their longest, keys in their order. The `read` group, with conformance-read.ts.
 */

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

export const readRoundTripCases: CaseFactory = (makeStore) => [
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
