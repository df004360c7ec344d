import assert from "node:assert/strict";
import { uuidv7 } from "../events/ids.js";
import type { NewEvent } from "../events/types.js";
import { EMPTY_HEAD } from "../store/append-plan.js";
import {
  assertChain,
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  note,
  readAll,
  readSessionAll,
  snapshot,
  started,
  withStore,
} from "./conformance-helpers.js";

export const retryCases: CaseFactory = (makeStore) => [
  {
    group: "retry",
    name: "retrying an identical batch is deduplicated and never stored twice",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const first = [started({ payload: { b: 1, a: [1, { d: 2, c: 3 }] } }), note("one")];
      const original = await store.append({ ...address, expectedSeq: 0, events: first });
      const retry = await store.append({ ...address, expectedSeq: 0, events: first });
      assert.deepStrictEqual(retry, { events: original.events, deduplicated: true });
      // Same content with another key order is the same event.
      const reordered = [{ ...first[0], payload: { a: [1, { c: 3, d: 2 }], b: 1 } }, first[1]];
      const again = await store.append({
        ...address,
        expectedSeq: 0,
        events: reordered as NewEvent[],
      });
      assert.deepStrictEqual(again, { events: original.events, deduplicated: true });
      const second = await store.append({ ...address, expectedSeq: 2, events: [note("two")] });
      const late = await store.append({ ...address, expectedSeq: 0, events: first });
      assert.deepStrictEqual(late, { events: original.events, deduplicated: true }, "late retry");
      // A writer that read the run again after a lost reply sends the batch at the run's end:
      // the store finds it by its ids (a fast path that writes at the head must not store it).
      const reread = await store.append({ ...address, expectedSeq: 3, events: first });
      assert.deepStrictEqual(
        reread,
        { events: original.events, deduplicated: true },
        "retry at the run's end",
      );
      const closing: NewEvent = { eventId: uuidv7(), type: "run.completed", payload: { ok: true } };
      const closed = await store.append({ ...address, expectedSeq: 3, events: [closing] });
      const closedRetry = await store.append({ ...address, expectedSeq: 3, events: [closing] });
      assert.deepStrictEqual(closedRetry, { events: closed.events, deduplicated: true });
      const all = await readAll(store, address);
      assert.deepStrictEqual(all, [...original.events, ...second.events, ...closed.events]);
      assertChain("run", all);
      assert.deepStrictEqual(await readSessionAll(store, address.sessionId), all);
      assert.equal((await store.runHead(address)).length, 4);
    }),
  },
  {
    group: "retry",
    name: "an eventId reused with other content or in another run is duplicate-event",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      const first = started();
      const second = note("original");
      await store.append({ ...address, expectedSeq: 0, events: [first, second] });
      const before = await snapshot(store, address);
      const cases: Array<[string, NewEvent[], string]> = [
        ["other payload", [{ ...second, payload: { value: "changed" } }], "$.events[0].eventId"],
        ["other type", [{ ...second, type: "x.other" }], "$.events[0].eventId"],
        ["other stepId", [{ ...second, stepId: "step-9" }], "$.events[0].eventId"],
        [
          "one new + one clash",
          [note("new"), { ...first, payload: { x: 1 } }],
          "$.events[1].eventId",
        ],
        ["one new + one stored", [note("new"), first], "$.events[1].eventId"],
        ["stored + new", [second, note("new")], "$.events[0].eventId"],
      ];
      for (const [label, events, path] of cases) {
        await expectLedgerError(label, () => store.append({ ...address, expectedSeq: 2, events }), {
          code: "duplicate-event",
          path,
        });
        await assertUnchanged(label, store, address, before);
      }
      const otherRun = { sessionId: address.sessionId, runId: `${address.runId}-other` };
      for (const [label, events] of [
        ["same content, other run", [first]],
        ["other content, other run", [{ ...second, payload: 1 }]],
      ] as Array<[string, NewEvent[]]>) {
        await expectLedgerError(
          label,
          () => store.append({ ...otherRun, expectedSeq: 0, events }),
          {
            code: "duplicate-event",
            path: "$.events[0].eventId",
          },
        );
        await assertUnchanged(label, store, address, before);
        assert.deepStrictEqual(await store.runHead(otherRun), { ...EMPTY_HEAD });
      }
    }),
  },
];
