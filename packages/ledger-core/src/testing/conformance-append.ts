import assert from "node:assert/strict";
import type { ConflictError } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import { EMPTY_HEAD } from "../store/append-plan.js";
import {
  agent,
  assertChain,
  assertCursors,
  assertIsoTime,
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  note,
  readAll,
  readSessionAll,
  snapshot,
  someRef,
  started,
  uuidv7Format,
  withStore,
} from "./conformance-helpers.js";

const requiredFields = [
  "schemaVersion",
  "eventId",
  "sessionId",
  "runId",
  "seq",
  "commitCursor",
  "type",
  "recordedAt",
  "payload",
  "prevHash",
  "hash",
];
const optionalFields = [
  "stepId",
  "attemptId",
  "retryOf",
  "parentRunId",
  "causedByEventId",
  "actor",
  "evidenceRefs",
  "metadata",
] as const;

/** Asserts a stored event is exactly what the writer sent, plus what the store assigns. */
export function assertStoredAs(
  label: string,
  stored: LedgerEvent,
  input: NewEvent,
  expected: { sessionId: string; runId: string; seq: number },
): void {
  const keys = [...requiredFields, ...optionalFields.filter((key) => input[key] !== undefined)];
  assert.deepStrictEqual(Object.keys(stored).sort(), keys.sort(), `${label}: envelope fields`);
  assert.equal(stored.schemaVersion, 1, `${label}: schemaVersion`);
  if (input.eventId === undefined) assert.match(stored.eventId, uuidv7Format, `${label}: eventId`);
  else assert.equal(stored.eventId, input.eventId, `${label}: eventId`);
  assert.equal(stored.sessionId, expected.sessionId, `${label}: sessionId`);
  assert.equal(stored.runId, expected.runId, `${label}: runId`);
  assert.equal(stored.seq, expected.seq, `${label}: seq`);
  assert.equal(stored.type, input.type, `${label}: type`);
  assert.deepStrictEqual(stored.payload, input.payload ?? null, `${label}: payload`);
  for (const key of optionalFields)
    assert.deepStrictEqual(stored[key], input[key], `${label}: ${key}`);
  assertIsoTime(`${label}: recordedAt`, stored.recordedAt);
}

function richBatch(): NewEvent[] {
  const requestedId = uuidv7();
  const completedId = uuidv7();
  return [
    started({
      actor: { type: "agent", id: "agent-1", framework: "plain" },
      payload: { input: "hello" },
      metadata: { host: { pid: 1, tags: ["a", "b"] } },
    }),
    {
      eventId: requestedId,
      type: "model.requested",
      stepId: "step-1",
      attemptId: "attempt-1",
      actor: { ...agent },
      payload: {
        z: 1,
        a: { y: [1, 2, { b: null, a: true }], x: "é" },
        numbers: [
          0,
          -1,
          0.1,
          1e21,
          1e-7,
          2 ** 53 - 1,
          -(2 ** 53 - 1),
          5e-324,
          1.7976931348623157e308,
        ],
        empty: {},
        list: [],
      },
      evidenceRefs: [someRef("evidence")],
    },
    {
      eventId: completedId,
      type: "model.completed",
      stepId: "step-1",
      attemptId: "attempt-1",
      causedByEventId: requestedId,
      payload: "a string payload",
    },
    {
      type: "tool.requested",
      stepId: "step-2",
      attemptId: "attempt-3",
      retryOf: "attempt-2",
      causedByEventId: completedId,
      actor: { type: "tool", id: "write_file" },
      payload: {
        name: "write_file",
        args: { path: "a.txt" },
        effect: { kind: "write", idempotent: false },
      },
    },
    { eventId: uuidv7(), type: "x.custom", payload: [1, "two", false, null] },
    { eventId: uuidv7(), type: "input.received" },
  ];
}

export const appendCases: CaseFactory = (makeStore) => [
  {
    group: "append",
    name: "an empty store has no sessions, runs or events",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      await store.init();
      const { sessionId, runId } = freshAddress();
      assert.deepStrictEqual(await store.listSessions(), { sessions: [] }, "listSessions()");
      assert.deepStrictEqual(await store.listSessions({ limit: 5 }), { sessions: [] });
      assert.deepStrictEqual(await store.readSession({ sessionId }), { events: [], nextCursor: 0 });
      assert.deepStrictEqual(await store.readRun({ sessionId, runId }), {
        events: [],
        nextCursor: 0,
      });
      assert.deepStrictEqual(await store.runHead({ sessionId, runId }), { ...EMPTY_HEAD });
      assert.deepStrictEqual(await store.listRuns(sessionId), []);
    }),
  },
  {
    group: "append",
    name: "append returns every envelope field and reads return the same events",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const batch = richBatch();
      const result = await store.append({ ...address, expectedSeq: 0, events: batch });
      assert.equal(result.deduplicated, false);
      assert.equal(result.events.length, batch.length);
      result.events.forEach((event, index) => {
        assertStoredAs(`event ${index}`, event, batch[index] as NewEvent, {
          ...address,
          seq: index,
        });
      });
      assertChain("append result", result.events);
      assertCursors("append result", result.events);
      assert.deepStrictEqual(await readAll(store, address), result.events, "readRun");
      assert.deepStrictEqual(await readSessionAll(store, address.sessionId), result.events);
      const last = result.events[result.events.length - 1] as LedgerEvent;
      assert.deepStrictEqual(await store.runHead(address), {
        exists: true,
        length: batch.length,
        status: "running",
        lastHash: last.hash,
      });
    }),
  },
  {
    group: "append",
    name: "seq and the hash chain continue across batches",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const sizes = [1, 3, 2, 1];
      let expectedSeq = 0;
      const returned: LedgerEvent[] = [];
      for (const size of sizes) {
        const events = Array.from({ length: size }, (_, index) => note(expectedSeq + index));
        const result = await store.append({ ...address, expectedSeq, events });
        assert.deepStrictEqual(
          result.events.map((event) => event.seq),
          events.map((_, index) => expectedSeq + index),
        );
        returned.push(...result.events);
        expectedSeq += size;
      }
      const all = await readAll(store, address);
      assert.deepStrictEqual(all, returned);
      assertChain("run", all);
      assertCursors("run", all);
      const page = await store.readRun({ ...address, fromSeq: 2, limit: 3 });
      assert.deepStrictEqual(page, { events: all.slice(2, 5), nextCursor: 5 });
      const tail = await store.readRun({ ...address, fromSeq: 5 });
      assert.deepStrictEqual(tail, { events: all.slice(5), nextCursor: 7 });
      assert.deepStrictEqual(await store.readRun({ ...address, fromSeq: 7 }), {
        events: [],
        nextCursor: 7,
      });
    }),
  },
  {
    group: "append",
    name: "a stale or future expectedSeq is a conflict with actualSeq and writes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      await store.append({ ...address, expectedSeq: 0, events: [started(), note(1), note(2)] });
      const before = await snapshot(store, address);
      for (const expectedSeq of [0, 1, 2, 4, 10]) {
        const error = (await expectLedgerError(
          `expectedSeq ${expectedSeq}`,
          () => store.append({ ...address, expectedSeq, events: [note("late")] }),
          { code: "conflict" },
        )) as ConflictError;
        assert.equal(error.actualSeq, 3, "actualSeq is the run's length");
        assert.equal(error.expectedSeq, expectedSeq, "expectedSeq is the writer's");
        await assertUnchanged(`expectedSeq ${expectedSeq}`, store, address, before);
      }
      // A run that does not exist is at 0: nothing may be created by the failed append.
      const other = freshAddress();
      const emptyBefore = await snapshot(store, other);
      const error = (await expectLedgerError(
        "new run at expectedSeq 2",
        () => store.append({ ...other, expectedSeq: 2, events: [started()] }),
        { code: "conflict" },
      )) as ConflictError;
      assert.equal(error.actualSeq, 0);
      await assertUnchanged("new run", store, other, emptyBefore);
    }),
  },
  {
    group: "append",
    name: "runs and sessions are isolated from each other",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const runId = "shared-run-id";
      const one = { sessionId: `${freshAddress().sessionId}-one`, runId };
      const two = { sessionId: `${freshAddress().sessionId}-two`, runId };
      const sharedEvent = note("same id in two sessions");
      const a = await store.append({ ...one, expectedSeq: 0, events: [started(), sharedEvent] });
      const b = await store.append({ ...two, expectedSeq: 0, events: [{ ...sharedEvent }] });
      assert.deepStrictEqual(
        b.events.map((event) => [event.seq, event.commitCursor, event.sessionId]),
        [[0, 1, two.sessionId]],
      );
      const otherRun = { sessionId: one.sessionId, runId: "another-run" };
      const c = await store.append({ ...otherRun, expectedSeq: 0, events: [started()] });
      assert.deepStrictEqual(
        c.events.map((event) => [event.seq, event.commitCursor]),
        [[0, 3]],
      );
      assert.deepStrictEqual(await readAll(store, one), a.events);
      assert.deepStrictEqual(await readAll(store, two), b.events);
      assert.deepStrictEqual(await readAll(store, otherRun), c.events);
      assert.deepStrictEqual(await readSessionAll(store, two.sessionId), b.events);
      assert.deepStrictEqual(await readSessionAll(store, one.sessionId), [
        ...a.events,
        ...c.events,
      ]);
      assert.equal((await store.runHead(one)).length, 2);
      assert.equal((await store.runHead(two)).length, 1);
      await store.append({
        ...two,
        expectedSeq: 1,
        events: [{ eventId: uuidv7(), type: "run.completed" }],
      });
      assert.equal((await store.runHead(one)).status, "running", "closing one run closes no other");
      await store.append({ ...one, expectedSeq: 2, events: [note("still open")] });
    }),
  },
  {
    group: "append",
    name: "mutating the input or returned events never changes what is stored",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const payload = { messages: [{ role: "user", content: "hi" }], n: 1 };
      const metadata = { tag: "x", nested: { list: [1, 2] } };
      const actor = { type: "human" as const, id: "person" };
      const refs = [someRef("a")];
      const input: NewEvent = {
        eventId: uuidv7(),
        type: "input.received",
        payload,
        metadata,
        actor,
        evidenceRefs: refs,
      };
      const events = [input];
      const pending = store.append({ ...address, expectedSeq: 0, events });
      // The store must take its copy before `append` returns its promise.
      payload.n = 2;
      const result = await pending;
      const expected = structuredClone(result.events);
      assert.equal(
        (expected[0]?.payload as { n: number } | undefined)?.n,
        1,
        "mutation while pending was stored",
      );
      payload.messages[0]!.content = "changed";
      payload.messages.push({ role: "user", content: "added" });
      metadata.nested.list.push(3);
      actor.id = "someone else";
      refs.push(someRef("b"));
      input.type = "x.changed";
      events.push(note("pushed"));
      const returned = result.events[0] as LedgerEvent & { payload: typeof payload };
      returned.payload.messages[0]!.content = "mutated result";
      returned.seq = 99;
      (returned.metadata as typeof metadata).nested.list.length = 0;
      const read = await store.readRun(address);
      assert.deepStrictEqual(read.events, expected, "after mutating input and append result");
      const session = await store.readSession({ sessionId: address.sessionId });
      for (const page of [read, session]) {
        const event = page.events[0] as LedgerEvent & { payload: typeof payload };
        event.payload.messages[0]!.content = "mutated read";
        event.payload.n = 42;
        (event.actor as { id: string }).id = "mutated";
        event.evidenceRefs?.push(someRef("c"));
        event.hash = "mutated";
      }
      assert.deepStrictEqual(await readAll(store, address), expected, "after mutating reads");
      assert.deepStrictEqual(await readSessionAll(store, address.sessionId), expected);
      assertChain("run", await readAll(store, address));
    }),
  },
];
