import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import type { NewEvent } from "../events/types.js";
import type { DeleteSessionResult, EventStore } from "../store/event-store.js";
import {
  allSessions,
  type CaseFactory,
  freshAddress,
  freshId,
  note,
  started,
  withStore,
} from "./conformance-helpers.js";
import { blobExists, closed, runWithRefs } from "./conformance-retention.js";

/**
 * deleteSession racing other writers: a blob re-put inside the grace period, writers in other
 * sessions, appends and other deletions of the same session. The `retention` group, after the
 * cases of conformance-retention.ts.
 */

/**
 * A session with one closed run, then an append of `events` to a new run racing the session's
 * deleteSession. The append starts a little after the delete, by a margin that varies with
 * `round`, so it lands at every point of the delete: before it looks at the runs, while it
 * works, after it is done. The append must succeed; the delete's outcome is returned.
 */
async function appendRacingDelete(
  store: EventStore,
  round: number,
  events: NewEvent[],
): Promise<{
  sessionId: string;
  fresh: { sessionId: string; runId: string };
  deleted: PromiseSettledResult<DeleteSessionResult>;
}> {
  const sessionId = freshId("race");
  await store.append({
    sessionId,
    runId: "done",
    expectedSeq: 0,
    events: [started(), { ...closed }],
  });
  const fresh = { sessionId, runId: freshId("new") };
  const [appended, deleted] = await Promise.allSettled([
    sleep(round % 6 === 0 ? 0 : (round % 6) / 2).then(() =>
      store.append({ ...fresh, expectedSeq: 0, events }),
    ),
    store.deleteSession(sessionId, { blobGraceMs: 0 }),
  ]);
  if (appended.status === "rejected") throw appended.reason;
  return { sessionId, fresh, deleted };
}
export const retentionRaceCases: CaseFactory = (makeStore) => [
  {
    group: "retention",
    name: "a blob re-put by another writer inside the grace period survives deleteSession",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const b = freshAddress();
      const content = `about to be shared ${freshId("x")}`;
      const ref = await store.putBlob(content);
      const only = await store.putBlob(`A alone ${freshId("y")}`);
      await runWithRefs(store, a, [ref, only]);
      // A grace long enough that a loaded machine (a CI run beside other work) does not take
      // longer than it between B's put and the delete: at 200 ms, one such run deleted both.
      await sleep(1_200);
      // Writer B puts the same content and has not appended yet when A is deleted.
      assert.equal(await store.putBlob(content), ref);
      const result = await store.deleteSession(a.sessionId, { blobGraceMs: 1_000 });
      assert.equal(result.deletedBlobs, 1, "A's own blob is past the grace period");
      assert.equal(await blobExists(store, only), false);
      assert.equal(await blobExists(store, ref), true, "putBlob restarted the grace period");
      await runWithRefs(store, b, [ref]);
      assert.equal(new TextDecoder().decode(await store.getBlob(ref)), content);
    }),
  },
  {
    group: "retention",
    name: "writers in other sessions keep their blobs while sessions are deleted concurrently",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const pool = Array.from({ length: 4 }, (_, index) => `pooled ${index} ${freshId("p")}`);
      const victims: { sessionId: string; runId: string }[] = [];
      for (let index = 0; index < 4; index++) {
        const address = freshAddress();
        const refs: string[] = [];
        for (const content of pool) refs.push(await store.putBlob(content));
        refs.push(await store.putBlob(`victim ${index} ${freshId("v")}`));
        await runWithRefs(store, address, refs);
        victims.push(address);
      }
      await sleep(250);
      const writer = freshAddress();
      const written: string[] = [];
      const write = async () => {
        await store.append({ ...writer, expectedSeq: 0, events: [started()] });
        for (let turn = 0; turn < 12; turn++) {
          // As the recorder does: put, then append the event naming the blobs.
          const refs = await Promise.all([
            store.putBlob(pool[turn % pool.length] as string),
            store.putBlob(`writer turn ${turn} ${freshId("w")}`),
          ]);
          await store.append({
            ...writer,
            expectedSeq: turn + 1,
            events: [note({ turn }, { evidenceRefs: refs })],
          });
          written.push(...refs);
        }
      };
      const remove = async () => {
        for (const victim of victims) {
          await store.deleteSession(victim.sessionId, { blobGraceMs: 200 });
          await sleep(5);
        }
      };
      await Promise.all([write(), remove()]);
      for (const ref of written)
        assert.equal(await blobExists(store, ref), true, `writer's blob ${ref} was collected`);
      for (const victim of victims)
        assert.deepEqual((await store.readSession({ sessionId: victim.sessionId })).events, []);
      // Once the writer's session is deleted as well, pooled content nobody names goes too.
      await store.append({ ...writer, expectedSeq: 13, events: [{ ...closed }] });
      await store.deleteSession(writer.sessionId, { blobGraceMs: 0 });
      for (const ref of written) assert.equal(await blobExists(store, ref), false);
    }),
  },
  {
    group: "retention",
    name: "deleteSession racing an append that starts a new run in the session never loses the append",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      for (let round = 0; round < 24; round++) {
        const first = started();
        const { sessionId, fresh, deleted } = await appendRacingDelete(store, round, [first]);
        const label = `round ${round}`;
        if (deleted.status === "fulfilled") {
          // The delete ran first: it removed the closed run only, and the new run is the
          // session's only content, as in a new session.
          assert.equal(deleted.value.deletedRuns, 1, `${label}: deletedRuns`);
          assert.equal(deleted.value.deletedEvents, 2, `${label}: deletedEvents`);
        } else {
          // The append ran first: its open run refuses the delete, which removed nothing.
          assert.equal((deleted.reason as { code?: string }).code, "invalid-argument", label);
        }
        const session = (await store.readSession({ sessionId })).events;
        const expected = deleted.status === "fulfilled" ? 1 : 3;
        assert.equal(session.length, expected, `${label}: events left in the session`);
        assert.deepEqual(
          session.map((event) => event.commitCursor),
          Array.from({ length: expected }, (_, index) => index + 1),
          `${label}: cursors`,
        );
        const run = (await store.readRun(fresh)).events;
        assert.deepEqual(
          run.map((event) => event.eventId),
          [first.eventId],
          `${label}: the acknowledged append is gone`,
        );
        const next = await store.append({ ...fresh, expectedSeq: 1, events: [note(round)] });
        assert.equal(next.events[0]?.commitCursor, expected + 1, `${label}: next cursor`);
        assert.ok(
          (await allSessions(store)).some((summary) => summary.sessionId === sessionId),
          `${label}: the session is not listed`,
        );
      }
    }),
  },
  {
    group: "retention",
    name: "two deleteSession calls racing on one session: one deletes it, the other is not-found, and it is not listed",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      for (let round = 0; round < 8; round++) {
        const address = freshAddress();
        await store.append({ ...address, expectedSeq: 0, events: [started(), { ...closed }] });
        const outcomes = await Promise.allSettled([
          store.deleteSession(address.sessionId, { blobGraceMs: 0 }),
          sleep(round % 4).then(() => store.deleteSession(address.sessionId, { blobGraceMs: 0 })),
        ]);
        const done = outcomes.filter((outcome) => outcome.status === "fulfilled");
        assert.equal(done.length, 1, `round ${round}: exactly one deletes the session`);
        const refused = outcomes.find((outcome) => outcome.status === "rejected");
        const reason: unknown = refused?.status === "rejected" ? refused.reason : undefined;
        assert.equal(
          (reason as { code?: string } | undefined)?.code,
          "not-found",
          `round ${round}: the other finds nothing to delete (${reason})`,
        );
        assert.ok(
          !(await allSessions(store)).some((summary) => summary.sessionId === address.sessionId),
          `round ${round}: a deleted session is still listed`,
        );
        assert.deepEqual((await store.readSession({ sessionId: address.sessionId })).events, []);
      }
    }),
  },
  {
    group: "retention",
    name: "deleteSession racing a whole new run (started and closed in one append): listed exactly when it has events",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      for (let round = 0; round < 24; round++) {
        const whole = [started(), { ...closed }];
        const { sessionId, deleted } = await appendRacingDelete(store, round, whole);
        const label = `round ${round}`;
        if (deleted.status === "rejected") throw deleted.reason;
        // Deleted before the append (the new run alone is left) or after it (nothing is).
        const events = (await store.readSession({ sessionId })).events;
        assert.ok(
          [0, 2].includes(events.length),
          `${label}: ${events.length} events left (${deleted.value.deletedEvents} deleted)`,
        );
        assert.equal(deleted.value.deletedEvents, events.length === 0 ? 4 : 2, label);
        const listed = (await allSessions(store)).some(
          (summary) => summary.sessionId === sessionId,
        );
        assert.equal(listed, events.length > 0, `${label}: listed must mean it has events`);
      }
    }),
  },
];
