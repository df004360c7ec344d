import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { NewEvent } from "../events/types.js";
import { prepareBlob } from "../store/blob.js";
import type { EventStore } from "../store/event-store.js";
import {
  allSessions,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  freshId,
  note,
  started,
  withStore,
} from "./conformance-helpers.js";

export const closed: NewEvent = { type: "run.completed", payload: { output: null } };

/**
 * Options of deleteSession and collectBlobs that the types forbid but a JavaScript caller or a
 * parsed config can pass: label, options, the path the error names.
 */
export const BAD_RETENTION_OPTIONS: [string, unknown, string][] = [
  ["null options", null, "$.options"],
  ["an array", [], "$.options"],
  ["a number", 5, "$.options"],
  ["a negative grace", { blobGraceMs: -1 }, "$.blobGraceMs"],
  ["NaN grace", { blobGraceMs: Number.NaN }, "$.blobGraceMs"],
  ["a string grace", { blobGraceMs: "0" }, "$.blobGraceMs"],
];

/** deleteSession's own options that the types forbid: label, options, the path the error names. */
const BAD_DELETE_OPTIONS: [string, unknown, string][] = [
  ["a negative event count", { eventCount: -1 }, "$.eventCount"],
  ["a fractional event count", { eventCount: 1.5 }, "$.eventCount"],
  ["a string event count", { eventCount: "3" }, "$.eventCount"],
  // Misspelt, the guard against deleting a session that grew since it was listed was off.
  ["a misspelt event count", { eventcount: 3 }, "$.eventcount"],
  ["a collectBlobs option", { dryRun: true }, "$.dryRun"],
];

/** A run that names `refs` in one event; closed unless `open`. */
export async function runWithRefs(
  store: EventStore,
  address: { sessionId: string; runId: string },
  refs: string[],
  options: { open?: boolean; parentRunId?: string } = {},
): Promise<void> {
  const events: NewEvent[] = [
    started(options.parentRunId === undefined ? {} : { parentRunId: options.parentRunId }),
    note({ refs }, { evidenceRefs: refs }),
  ];
  if (!options.open) events.push({ ...closed });
  await store.append({ ...address, expectedSeq: 0, events });
}

/** The bytes a store keeps for these contents (every store keeps prepareBlob's stored form). */
export function storedBytes(contents: string[]): number {
  return contents.reduce((sum, content) => sum + prepareBlob(content).stored.byteLength, 0);
}

export async function blobExists(store: EventStore, ref: string): Promise<boolean> {
  try {
    await store.getBlob(ref);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "not-found") return false;
    throw error;
  }
}

export const retentionCases: CaseFactory = (makeStore) => [
  {
    group: "retention",
    name: "deleteSession removes a closed session's events, runs and unshared blobs, keeps shared ones",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const b = freshAddress();
      const shared = await store.putBlob(`shared system prompt ${freshId("s")}`);
      const only = await store.putBlob(`only in A ${freshId("a")}`);
      const childOnly = await store.putBlob(`only in A's child ${freshId("c")}`);
      await runWithRefs(store, a, [shared, only]);
      const child = { sessionId: a.sessionId, runId: freshId("child") };
      await runWithRefs(store, child, [childOnly], { parentRunId: a.runId });
      await runWithRefs(store, b, [shared], { open: true });
      const before = await store.readSession({ sessionId: b.sessionId });

      const result = await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      assert.equal(result.sessionId, a.sessionId);
      assert.equal(result.deletedEvents, 6, "two runs of three events");
      assert.equal(result.deletedRuns, 2);
      assert.equal(result.deletedBlobs, 2, "the two blobs only A referenced");
      assert.equal(result.keptBlobs, 1, "the blob B references too");

      assert.deepEqual((await store.readSession({ sessionId: a.sessionId })).events, []);
      assert.deepEqual((await store.readRun(a)).events, []);
      assert.deepEqual(await store.listRuns(a.sessionId), []);
      assert.equal((await store.runHead(a)).exists, false);
      const listed = (await allSessions(store)).map((session) => session.sessionId);
      assert.ok(!listed.includes(a.sessionId), "listSessions no longer shows it");
      assert.ok(listed.includes(b.sessionId));
      assert.equal(await blobExists(store, only), false, "unshared blob gone");
      assert.equal(await blobExists(store, childOnly), false, "child run's blob gone");
      assert.equal(await blobExists(store, shared), true, "shared blob kept");
      assert.deepEqual(await store.readSession({ sessionId: b.sessionId }), before);
      await expectLedgerError("deleting it again", () => store.deleteSession(a.sessionId), {
        code: "not-found",
      });
      // The session id can be used again from scratch.
      await runWithRefs(store, a, [shared]);
      assert.equal((await store.readRun(a)).events[0]?.commitCursor, 1, "cursor restarts");
    }),
  },
  {
    group: "retention",
    name: "deleteSession refuses an open run (invalid-argument naming every open run, in the same order on every store) and unknown sessions",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const ref = await store.putBlob(`open session blob ${freshId("o")}`);
      await runWithRefs(store, a, [ref]);
      // Started in this order, listed in another by some stores, sorted in a third by a
      // database's collation (a before B): the refusal names them by code unit, B first.
      const label = freshId("still-open");
      const open = [`${label}-a`, `${label}-B`];
      for (const runId of open)
        await runWithRefs(store, { sessionId: a.sessionId, runId }, [ref], { open: true });
      const error = await expectLedgerError(
        "session with an open run",
        () => store.deleteSession(a.sessionId, { blobGraceMs: 0 }),
        { code: "invalid-argument" },
      );
      assert.ok(
        error.message.includes(`2 open runs: "${label}-B", "${label}-a"`),
        `names the open runs, by code unit: ${error.message}`,
      );
      assert.equal((await store.readSession({ sessionId: a.sessionId })).events.length, 7);
      assert.equal(await blobExists(store, ref), true, "nothing deleted");
      await expectLedgerError("unknown session", () => store.deleteSession(freshId("nobody")), {
        code: "not-found",
      });
      await expectLedgerError("bad id", () => store.deleteSession(""), {
        code: "invalid-event",
      });
    }),
  },
  {
    group: "retention",
    name: "deleteSession refuses bad options (invalid-argument with their path) and deletes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const ref = await store.putBlob(`bad options blob ${freshId("b")}`);
      await runWithRefs(store, a, [ref]);
      for (const [label, options, path] of [...BAD_RETENTION_OPTIONS, ...BAD_DELETE_OPTIONS])
        await expectLedgerError(
          label,
          () => store.deleteSession(a.sessionId, options as { blobGraceMs?: number }),
          { code: "invalid-argument", path },
        );
      assert.equal((await store.readSession({ sessionId: a.sessionId })).events.length, 3);
      assert.equal(await blobExists(store, ref), true, "nothing deleted");
    }),
  },
  {
    group: "retention",
    name: "deleteSession with eventCount deletes a session still at that count, and refuses one written since (conflict, nothing deleted)",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const ref = await store.putBlob(`looked at, then written ${freshId("w")}`);
      await runWithRefs(store, a, [ref]);
      const [looked] = (await allSessions(store)).filter(
        (session) => session.sessionId === a.sessionId,
      );
      assert.equal(looked?.eventCount, 3);
      // An agent comes back to the session after the caller looked: a run started and closed.
      const back = { sessionId: a.sessionId, runId: freshId("back") };
      await runWithRefs(store, back, []);
      const error = await expectLedgerError(
        "a session written since",
        () => store.deleteSession(a.sessionId, { eventCount: 3, blobGraceMs: 0 }),
        { code: "conflict" },
      );
      assert.equal((error as { expectedSeq?: number }).expectedSeq, 3, "expected count");
      assert.equal((error as { actualSeq?: number }).actualSeq, 6, "count found");
      assert.ok(error.message.includes(a.sessionId), `names the session: ${error.message}`);
      assert.equal((await store.readSession({ sessionId: a.sessionId })).events.length, 6);
      assert.equal(await blobExists(store, ref), true, "nothing deleted");
      assert.ok(
        (await allSessions(store)).some((session) => session.sessionId === a.sessionId),
        "still listed",
      );
      // At the count it holds, it goes.
      const result = await store.deleteSession(a.sessionId, { eventCount: 6, blobGraceMs: 0 });
      assert.equal(result.deletedEvents, 6);
      assert.equal(await blobExists(store, ref), false);
      await expectLedgerError("gone", () => store.deleteSession(a.sessionId, { eventCount: 6 }), {
        code: "not-found",
      });
    }),
  },
  {
    group: "retention",
    name: "a blob put for a session is collected with it even if no event ever named it (a writer died between the put and the append)",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const b = freshAddress();
      await runWithRefs(store, a, []);
      await runWithRefs(store, b, [], { open: true });
      const lost = await store.putBlob(`put, never appended ${freshId("l")}`, {
        sessionId: a.sessionId,
      });
      const [batched] = await (store.putBlobs
        ? store.putBlobs([`batch, never appended ${freshId("m")}`], { sessionId: a.sessionId })
        : Promise.all([
            store.putBlob(`batch, never appended ${freshId("m")}`, { sessionId: a.sessionId }),
          ]));
      // Put for A, and named by B's next event: B keeps it.
      const shared = await store.putBlob(`put for A, named by B ${freshId("s")}`, {
        sessionId: a.sessionId,
      });
      await store.append({
        ...b,
        expectedSeq: 2,
        events: [note({ ref: shared }, { evidenceRefs: [shared] })],
      });
      const result = await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      assert.equal(result.deletedBlobs, 2, "the two blobs put for A alone");
      assert.equal(result.keptBlobs, 1, "the blob B names");
      assert.equal(await blobExists(store, lost), false);
      assert.equal(await blobExists(store, batched as string), false);
      assert.equal(await blobExists(store, shared), true);
    }),
  },
  {
    group: "retention",
    name: "putBlob refuses a bad sessionId option (invalid-event with its path) and stores nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const content = `refused put ${freshId("r")}`;
      const bad: [string, unknown, string][] = [
        ["null options", null, "$.options"],
        ["an array", [], "$.options"],
        ["an empty session id", { sessionId: "" }, "$.options.sessionId"],
        ["a number", { sessionId: 7 }, "$.options.sessionId"],
        ["a control character", { sessionId: "a\u0000b" }, "$.options.sessionId"],
      ];
      for (const [label, options, path] of bad) {
        await expectLedgerError(
          `putBlob, ${label}`,
          () => store.putBlob(content, options as { sessionId?: string }),
          { code: "invalid-event", path },
        );
        if (store.putBlobs)
          await expectLedgerError(
            `putBlobs, ${label}`,
            () =>
              store.putBlobs?.([content], options as { sessionId?: string }) as Promise<unknown>,
            { code: "invalid-event", path },
          );
      }
      const ref = `sha256:${createHash("sha256").update(content).digest("hex")}`;
      assert.equal(await blobExists(store, ref), false, "nothing stored");
    }),
  },
];
