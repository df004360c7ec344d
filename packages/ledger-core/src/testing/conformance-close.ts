import assert from "node:assert/strict";
import type { EventStore } from "../store/event-store.js";
import {
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  note,
  started,
  withStore,
} from "./conformance-helpers.js";

/** One call of every store method, as a caller would make it after close(). */
function everyMethod(store: EventStore, address: { sessionId: string; runId: string }) {
  return {
    init: () => store.init(),
    append: () => store.append({ ...address, expectedSeq: 2, events: [note("late")] }),
    readRun: () => store.readRun(address),
    readSession: () => store.readSession({ sessionId: address.sessionId }),
    listRuns: () => store.listRuns(address.sessionId),
    listSessions: () => store.listSessions({}),
    runHead: () => store.runHead(address),
    fork: () => store.fork({ ...address, newRunId: `${address.runId}-fork`, uptoSeq: 1 }),
    putBlob: () => store.putBlob("late blob"),
    getBlob: () => store.getBlob(`sha256:${"0".repeat(64)}`),
    deleteSession: () => store.deleteSession(address.sessionId),
    collectBlobs: () => store.collectBlobs({}),
  } satisfies Record<string, () => Promise<unknown>>;
}

export const closeCases: CaseFactory = (makeStore) => [
  {
    group: "close",
    name: "close() lets an append under way finish, runs once, and every call after it is refused as store-unavailable with nothing written",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const address = freshAddress();
      await store.append({ ...address, expectedSeq: 0, events: [started()] });
      // Under way when close() is called: it gets its answer, not a refusal or no answer.
      const underWay = store.append({ ...address, expectedSeq: 1, events: [note("in flight")] });
      const first = store.close();
      const second = store.close();
      const [appended] = await Promise.all([underWay, first, second]);
      assert.equal(appended.events.length, 1, "the append under way at close() was written");
      await store.close();
      for (const [name, call] of Object.entries(everyMethod(store, address))) {
        const error = await expectLedgerError(`${name} after close()`, call, {
          code: "store-unavailable",
        });
        assert.equal(
          (error as { nothingWritten?: unknown }).nothingWritten,
          true,
          `${name} after close(): nothingWritten`,
        );
      }
    }),
  },
];
