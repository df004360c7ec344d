import assert from "node:assert/strict";
import type { ConflictError } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import {
  agent,
  assertChain,
  assertCursors,
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  readAll,
  readSessionAll,
  snapshot,
  someRef,
  started,
  withStore,
} from "./conformance-helpers.js";

/** A run of five events with causal links, the last one terminal. */
async function sourceRun(store: EventStore) {
  const address = freshAddress();
  const outside = uuidv7();
  const requested = uuidv7();
  const completed = uuidv7();
  const events: NewEvent[] = [
    started({ causedByEventId: outside, metadata: { origin: "parent" } }),
    {
      eventId: requested,
      type: "model.requested",
      stepId: "step-1",
      attemptId: "attempt-1",
      actor: { ...agent },
      payload: { messages: [{ role: "user", content: "hi" }] },
      evidenceRefs: [someRef("prompt")],
    },
    {
      eventId: completed,
      type: "model.completed",
      stepId: "step-1",
      attemptId: "attempt-1",
      causedByEventId: requested,
      payload: { text: "calling a tool" },
    },
    {
      eventId: uuidv7(),
      type: "tool.requested",
      stepId: "step-2",
      attemptId: "attempt-2",
      causedByEventId: completed,
      payload: { name: "t", args: {}, effect: { kind: "write", idempotent: false } },
    },
    { eventId: uuidv7(), type: "run.completed", payload: { output: "done" } },
  ];
  const result = await store.append({ ...address, expectedSeq: 0, events });
  return { address, outside, source: result.events };
}

/** Strips what a fork changes, to compare a copy with its original. */
function content(event: LedgerEvent): Partial<LedgerEvent> {
  const {
    eventId: _eventId,
    runId: _runId,
    commitCursor: _cursor,
    recordedAt: _recordedAt,
    prevHash: _prevHash,
    hash: _hash,
    causedByEventId: _causedBy,
    ...rest
  } = event;
  return rest;
}

export const forkCases: CaseFactory = (makeStore) => [
  {
    group: "fork",
    name: "fork copies a prefix with new ids, remapped causes and its own chain",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const { address, outside, source } = await sourceRun(store);
      const before = await readAll(store, address);
      const target = { sessionId: address.sessionId, runId: `${address.runId}-fork` };
      const result = await store.fork({ ...address, newRunId: target.runId, uptoSeq: 4 });
      assert.equal(result.deduplicated, false);
      const copies = result.events;
      assert.equal(copies.length, 4);
      assert.deepStrictEqual(await readAll(store, target), copies, "readRun of the fork");
      assertChain("fork", copies);
      const sourceIds = new Set(source.map((event) => event.eventId));
      copies.forEach((copy, index) => {
        const original = source[index] as LedgerEvent;
        assert.equal(copy.runId, target.runId);
        assert.ok(!sourceIds.has(copy.eventId), `copy ${index} has a new eventId`);
        assert.deepStrictEqual(content(copy), content(original), `copy ${index} content`);
      });
      assert.equal(new Set(copies.map((event) => event.eventId)).size, 4);
      assert.equal(copies[0]?.causedByEventId, outside, "a cause outside the prefix is kept");
      assert.equal(copies[2]?.causedByEventId, copies[1]?.eventId, "causes inside are remapped");
      assert.equal(copies[3]?.causedByEventId, copies[2]?.eventId);
      assert.deepStrictEqual(await readAll(store, address), before, "the source is unchanged");
      const session = await readSessionAll(store, address.sessionId);
      assertCursors("session", session);
      assert.deepStrictEqual(session, [...source, ...copies]);
      assert.deepStrictEqual(await store.runHead(target), {
        exists: true,
        length: 4,
        status: "running",
        lastHash: copies[3]?.hash,
      });
      // The fork is an ordinary open run: appends continue at uptoSeq.
      const next = await store.append({
        ...target,
        expectedSeq: 4,
        events: [{ eventId: uuidv7(), type: "tool.completed", payload: { ok: true } }],
      });
      assert.equal(next.events[0]?.prevHash, copies[3]?.hash);
      await expectLedgerError(
        "stale append to the fork",
        () => store.append({ ...target, expectedSeq: 4, events: [started()] }),
        { code: "conflict" },
      );
    }),
  },
  {
    group: "fork",
    name: "a fork that includes the terminal event is closed",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const { address, source } = await sourceRun(store);
      const target = { sessionId: address.sessionId, runId: `${address.runId}-whole` };
      const result = await store.fork({ ...address, newRunId: target.runId, uptoSeq: 5 });
      assert.equal(result.events.length, 5);
      assertChain("fork", result.events);
      assert.deepStrictEqual(await store.runHead(target), {
        exists: true,
        length: 5,
        status: "completed",
        lastHash: result.events[4]?.hash,
      });
      await expectLedgerError(
        "append to a closed fork",
        () => store.append({ ...target, expectedSeq: 5, events: [started()] }),
        { code: "run-closed" },
      );
      const single = await store.fork({ ...address, newRunId: `${address.runId}-one`, uptoSeq: 1 });
      assert.deepStrictEqual(
        content(single.events[0] as LedgerEvent),
        content(source[0] as LedgerEvent),
      );
      assert.equal(single.events[0]?.prevHash, null);
    }),
  },
  {
    group: "fork",
    name: "fork into an existing run is conflict; unknown run or too long a prefix is not-found",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const { address } = await sourceRun(store);
      const taken = { sessionId: address.sessionId, runId: `${address.runId}-taken` };
      await store.append({ ...taken, expectedSeq: 0, events: [started(), started()] });
      const before = await snapshot(store, address);
      const error = (await expectLedgerError(
        "fork onto an existing run",
        () => store.fork({ ...address, newRunId: taken.runId, uptoSeq: 2 }),
        { code: "conflict" },
      )) as ConflictError;
      assert.equal(error.actualSeq, 2);
      // A fork writes no run the caller read: the message says the run exists, not that a
      // writer's expectation was wrong.
      assert.match(error.message, /exists already/);
      await expectLedgerError(
        "fork onto itself",
        () => store.fork({ ...address, newRunId: address.runId, uptoSeq: 2 }),
        { code: "conflict" },
      );
      await expectLedgerError(
        "unknown run",
        () => store.fork({ ...address, runId: "no-such-run", newRunId: "new", uptoSeq: 1 }),
        { code: "not-found", path: "$.runId" },
      );
      await expectLedgerError(
        "unknown session",
        () => store.fork({ ...freshAddress(), newRunId: "new", uptoSeq: 1 }),
        { code: "not-found", path: "$.runId" },
      );
      const pastTheEnd = await expectLedgerError(
        "uptoSeq past the end",
        () => store.fork({ ...address, newRunId: "new", uptoSeq: 6 }),
        { code: "not-found", path: "$.uptoSeq" },
      );
      assert.match(pastTheEnd.message, /has 5 events; cannot fork up to 6/);
      await assertUnchanged("rejected forks", store, address, before);
      assert.deepStrictEqual(
        (await store.runHead({ sessionId: address.sessionId, runId: "new" })).exists,
        false,
      );
    }),
  },
];
