import assert from "node:assert/strict";
import { uuidv7 } from "../events/ids.js";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import {
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  note,
  snapshot,
  started,
  withStore,
} from "./conformance-helpers.js";

async function closedRun(store: EventStore, terminal: string) {
  const address = freshAddress();
  const first = started();
  const closing: NewEvent = { eventId: uuidv7(), type: terminal as NewEvent["type"], payload: {} };
  await store.append({ ...address, expectedSeq: 0, events: [first] });
  await store.append({ ...address, expectedSeq: 1, events: [closing] });
  return { address, first, closing };
}

export const closedRunCases: CaseFactory = (makeStore) => [
  {
    group: "closed run",
    name: "every append to a closed run is run-closed, whatever its expectedSeq",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      for (const terminal of ["run.completed", "run.failed", "run.cancelled"]) {
        const { address } = await closedRun(store, terminal);
        const before = await snapshot(store, address);
        for (const expectedSeq of [2, 1, 0, 7]) {
          for (const events of [[note("after")], [{ ...started() }], [note(1), note(2)]]) {
            await expectLedgerError(
              `${terminal} at ${expectedSeq}`,
              () => store.append({ ...address, expectedSeq, events }),
              { code: "run-closed" },
            );
          }
          await expectLedgerError(
            `${terminal}: another terminal at ${expectedSeq}`,
            () =>
              store.append({
                ...address,
                expectedSeq,
                events: [{ eventId: uuidv7(), type: "run.completed" }],
              }),
            { code: "run-closed" },
          );
        }
        await assertUnchanged(terminal, store, address, before);
      }
    }),
  },
  {
    group: "closed run",
    name: "a terminal event that is not last in its batch is rejected and writes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      await store.append({ ...address, expectedSeq: 0, events: [started()] });
      const before = await snapshot(store, address);
      for (const terminal of ["run.completed", "run.failed", "run.cancelled"] as const) {
        await expectLedgerError(
          terminal,
          () =>
            store.append({
              ...address,
              expectedSeq: 1,
              events: [note(1), { eventId: uuidv7(), type: terminal }, note(2)],
            }),
          { code: "run-closed" },
        );
        await assertUnchanged(terminal, store, address, before);
      }
      // Said by the batch itself, before anything stored is looked at: also when the batch
      // holds an id stored in another run (which alone would be duplicate-event), and on a
      // closed run (which alone would be run-closed too). Every store answers it alike.
      const other = { sessionId: address.sessionId, runId: `${address.runId}-other` };
      const elsewhere = started();
      await store.append({ ...other, expectedSeq: 0, events: [elsewhere] });
      const withStored = await snapshot(store, address);
      await expectLedgerError(
        "a closing event before an id stored elsewhere",
        () =>
          store.append({
            ...address,
            expectedSeq: 1,
            events: [{ eventId: uuidv7(), type: "run.completed" }, elsewhere],
          }),
        { code: "run-closed" },
      );
      await assertUnchanged("stored id", store, address, withStored);
      // Terminal last in the batch is fine and closes the run.
      const result = await store.append({
        ...address,
        expectedSeq: 1,
        events: [note(1), { eventId: uuidv7(), type: "run.failed", payload: { reason: "x" } }],
      });
      assert.deepStrictEqual(
        result.events.map((event) => event.seq),
        [1, 2],
      );
      assert.equal((await store.runHead(address)).status, "failed");
    }),
  },
];
