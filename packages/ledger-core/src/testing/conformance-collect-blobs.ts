import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { prepareBlob } from "../store/blob.js";
import type { CollectBlobsOptions, EventStore } from "../store/event-store.js";
import {
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  freshId,
  note,
  started,
  withStore,
} from "./conformance-helpers.js";
import {
  BAD_RETENTION_OPTIONS,
  blobExists,
  closed,
  runWithRefs,
  storedBytes,
} from "./conformance-retention.js";

/**
 * Puts older than this are past the cases' grace period (GRACE_MS), on any store's clock. The
 * grace must outlast the time between a put within it and the collect passes after it: on a
 * loaded machine (a CI run's parallel files) 200 ms was seen passing between the two, and the
 * "recent" blob was then collected, as the contract allows.
 */
const AGE_MS = 1_200;
const GRACE_MS = 1_000;
/**
 * The race case's grace. A writer's put without a session is safe from collection only if
 * the append naming it commits within the grace, and on a loaded machine (a CI run's parallel
 * files) a put and its append were seen more than 200 ms apart, which the contract allows to
 * collect. Long enough that only a store bug can take a named blob.
 */
const RACE_GRACE_MS = 2_000;
const RACE_AGE_MS = RACE_GRACE_MS + 200;

async function exists(store: EventStore, refs: Record<string, string>): Promise<string[]> {
  const present: string[] = [];
  for (const [name, ref] of Object.entries(refs))
    if (await blobExists(store, ref)) present.push(name);
  return present;
}

/** collectBlobs' own options that the types forbid: label, options, the path the error names. */
const BAD_COLLECT_OPTIONS: [string, unknown, string][] = [
  ["a signal that is a boolean", { signal: true }, "$.signal"],
  ["a controller in place of its signal", { signal: new AbortController() }, "$.signal"],
  ["a dryRun that is a string", { dryRun: "yes" }, "$.dryRun"],
  ["a dryRun that is null", { dryRun: null }, "$.dryRun"],
  ["asIfDeleted without dryRun", { asIfDeleted: ["s"] }, "$.asIfDeleted"],
  ["asIfDeleted in a pass that deletes", { dryRun: false, asIfDeleted: [] }, "$.asIfDeleted"],
  ["asIfDeleted that is a string", { dryRun: true, asIfDeleted: "s" }, "$.asIfDeleted"],
  ["asIfDeleted that is null", { dryRun: true, asIfDeleted: null }, "$.asIfDeleted"],
  // Misspelt, a pass meant only to count deleted what it found.
  ["a misspelt dryRun", { dryrun: true }, "$.dryrun"],
  ["a deleteSession option", { eventCount: 3 }, "$.eventCount"],
];

export const collectBlobCases: CaseFactory = (makeStore) => [
  {
    group: "retention",
    name: "collectBlobs deletes the blobs no existing session references once past the grace, and keeps the rest",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const orphanContent = `put with no session, never named ${freshId("o")}`;
      const refs = {
        named: await store.putBlob(`named by A ${freshId("n")}`),
        putForA: await store.putBlob(`put for A, not named yet ${freshId("p")}`, {
          sessionId: a.sessionId,
        }),
        orphan: await store.putBlob(orphanContent),
        forNobody: await store.putBlob(`put for a session that never appended ${freshId("f")}`, {
          sessionId: freshId("never"),
        }),
      };
      await runWithRefs(store, a, [refs.named], { open: true });
      const before = await store.readSession({ sessionId: a.sessionId });
      await sleep(AGE_MS);
      const recent = await store.putBlob(`put within the grace ${freshId("r")}`);

      const result = await store.collectBlobs({ blobGraceMs: GRACE_MS });
      assert.deepEqual(result, { deletedBlobs: 2 });
      assert.deepEqual(await exists(store, { ...refs, recent }), ["named", "putForA", "recent"]);
      assert.deepEqual(await store.readSession({ sessionId: a.sessionId }), before);
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: GRACE_MS }),
        { deletedBlobs: 0 },
        "a second pass finds nothing more",
      );
      // Collected content put again is stored again.
      const again = await store.putBlob(orphanContent);
      assert.equal(again, refs.orphan);
      assert.equal(await blobExists(store, again), true);
      // Once A is gone, its blobs go with it (deleteSession), and the recent one with a pass.
      await store.append({ ...a, expectedSeq: 2, events: [{ ...closed }] });
      await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      assert.deepEqual(await exists(store, refs), ["orphan"], "put again, not named");
      assert.equal((await store.collectBlobs({ blobGraceMs: 0 })).deletedBlobs, 2);
      assert.deepEqual(await exists(store, { ...refs, recent }), []);
    }),
  },
  {
    group: "retention",
    name: "collectBlobs with dryRun counts the blobs a pass would delete and their stored bytes, and deletes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const gone = freshAddress();
      const contents = {
        orphan: `put with no session, never named ${freshId("o")}`,
        forNobody: `put for a session that never appended ${freshId("f")}`,
        // Long and repetitive: stored deflated, so its bytes are not its length.
        ofGone: `named only by a deleted session ${freshId("g")} `.repeat(40),
      };
      const refs = {
        named: await store.putBlob(`named by A ${freshId("n")}`),
        putForA: await store.putBlob(`put for A ${freshId("p")}`, { sessionId: a.sessionId }),
        orphan: await store.putBlob(contents.orphan),
        forNobody: await store.putBlob(contents.forNobody, { sessionId: freshId("never") }),
        ofGone: await store.putBlob(contents.ofGone),
      };
      await runWithRefs(store, a, [refs.named], { open: true });
      await runWithRefs(store, gone, [refs.ofGone]);
      // Deleted within the grace: its blob stays, claimed by a session that is gone.
      assert.equal((await store.deleteSession(gone.sessionId)).deletedBlobs, 0);
      await sleep(AGE_MS);
      const recent = await store.putBlob(`put within the grace ${freshId("r")}`);
      const before = await store.readSession({ sessionId: a.sessionId });
      const all = { ...refs, recent };
      const present = await exists(store, all);

      const dry = await store.collectBlobs({ blobGraceMs: GRACE_MS, dryRun: true });
      assert.deepEqual(dry, {
        deletedBlobs: 0,
        wouldDelete: { blobs: 3, bytes: storedBytes(Object.values(contents)) },
      });
      assert.ok(dry.wouldDelete && dry.wouldDelete.bytes < contents.ofGone.length, "stored bytes");
      assert.deepEqual(await exists(store, all), present, "nothing deleted");
      assert.deepEqual(await store.readSession({ sessionId: a.sessionId }), before);
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: GRACE_MS, dryRun: false }),
        { deletedBlobs: 3 },
        "a pass deletes what the dry run counted",
      );
      assert.deepEqual(await exists(store, all), ["named", "putForA", "recent"]);
      assert.deepEqual(await store.collectBlobs({ blobGraceMs: GRACE_MS, dryRun: true }), {
        deletedBlobs: 0,
        wouldDelete: { blobs: 0, bytes: 0 },
      });
      const aborted = new AbortController();
      aborted.abort();
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: 0, dryRun: true, signal: aborted.signal }),
        { deletedBlobs: 0, wouldDelete: { blobs: 0, bytes: 0 }, stopped: true },
        "stopped before its first page: nothing counted",
      );
    }),
  },
  {
    group: "retention",
    name: "collectBlobs with dryRun and asIfDeleted counts what deleting those sessions and a pass would free",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      // A and B go; K stays. Claims: events naming a blob, and puts for a session. B's id is
      // not ASCII: a store that compares ids as bytes must encode them as it stores them.
      const [a, k] = [freshAddress(), freshAddress()];
      const b = { ...freshAddress(), sessionId: freshId("séance-ü-☃") };
      const contents = {
        onlyA: `named by A only ${freshId("a")}`,
        putForA: `put for A, never named ${freshId("p")}`,
        // Shared by two sessions that both go: deleting either one alone keeps it.
        aAndB: `named by A and B ${freshId("ab")} `.repeat(30),
        onlyB: `named by B only ${freshId("b")}`,
        orphan: `put with no session, never named ${freshId("o")}`,
      };
      const kept = {
        aAndK: await store.putBlob(`named by A and by K, which stays ${freshId("ak")}`),
        putForK: await store.putBlob(`put for K ${freshId("pk")}`, { sessionId: k.sessionId }),
      };
      const refs = {
        onlyA: await store.putBlob(contents.onlyA),
        putForA: await store.putBlob(contents.putForA, { sessionId: a.sessionId }),
        aAndB: await store.putBlob(contents.aAndB),
        onlyB: await store.putBlob(contents.onlyB),
        orphan: await store.putBlob(contents.orphan),
      };
      await runWithRefs(store, a, [refs.onlyA, refs.aAndB, kept.aAndK]);
      await runWithRefs(store, b, [refs.aAndB, refs.onlyB]);
      await runWithRefs(store, k, [kept.aAndK], { open: true });
      const all = { ...refs, ...kept };
      const before = await store.readSession({ sessionId: a.sessionId });

      const asIfDeleted = [a.sessionId, b.sessionId, freshId("never-existed")];
      const dry = await store.collectBlobs({ blobGraceMs: 0, dryRun: true, asIfDeleted });
      assert.deepEqual(dry, {
        deletedBlobs: 0,
        wouldDelete: { blobs: 5, bytes: storedBytes(Object.values(contents)) },
      });
      assert.deepEqual(await exists(store, all), Object.keys(all), "nothing deleted");
      assert.deepEqual(await store.readSession({ sessionId: a.sessionId }), before, "A untouched");
      // A bad id is invalid-event, as every id argument is (deleteSession, listRuns).
      for (const [label, ids, path] of [
        ["an empty id", [a.sessionId, ""], "$.asIfDeleted[1]"],
        ["a number", [7], "$.asIfDeleted[0]"],
        ["an id with a control character", ["a\u0000"], "$.asIfDeleted[0]"],
      ] as const)
        await expectLedgerError(
          label,
          () => store.collectBlobs({ dryRun: true, asIfDeleted: ids as unknown as string[] }),
          { code: "invalid-event", path },
        );
      // Without asIfDeleted, or with an empty list, only the orphan.
      assert.deepEqual(await store.collectBlobs({ blobGraceMs: 0, dryRun: true }), {
        deletedBlobs: 0,
        wouldDelete: { blobs: 1, bytes: storedBytes([contents.orphan]) },
      });
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: 0, dryRun: true, asIfDeleted: [] }),
        { deletedBlobs: 0, wouldDelete: { blobs: 1, bytes: storedBytes([contents.orphan]) } },
      );
      // Within the grace nothing counts, as in the pass.
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: 3_600_000, dryRun: true, asIfDeleted }),
        { deletedBlobs: 0, wouldDelete: { blobs: 0, bytes: 0 } },
      );

      // What the count said: deleting A and B, then a pass, frees exactly those five.
      const deleted =
        (await store.deleteSession(a.sessionId, { blobGraceMs: 0 })).deletedBlobs +
        (await store.deleteSession(b.sessionId, { blobGraceMs: 0 })).deletedBlobs +
        (await store.collectBlobs({ blobGraceMs: 0 })).deletedBlobs;
      assert.equal(deleted, 5);
      assert.deepEqual(await exists(store, all), ["aAndK", "putForK"]);
    }),
  },
  {
    group: "retention",
    name: "collectBlobs collects a blob put for a session after its deletion began, and forgets that session's claim",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      await runWithRefs(store, a, []);
      await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      // What a put racing the deletion leaves: the blob, claimed by a session that is gone.
      const content = `put while A was deleted ${freshId("late")}`;
      const late = await store.putBlob(content, { sessionId: a.sessionId });
      // No grace: the claim is the point here, and the first case covers the grace (waiting
      // out a grace of its own twice took this case 2.4 s on every store).
      assert.deepEqual(await store.collectBlobs({ blobGraceMs: 0 }), { deletedBlobs: 1 });
      assert.equal(await blobExists(store, late), false);
      // The id comes back as a new session that names nothing: the old claim is not its own.
      await runWithRefs(store, a, [], { open: true });
      assert.equal(await store.putBlob(content), late);
      assert.deepEqual(await store.collectBlobs({ blobGraceMs: 0 }), { deletedBlobs: 1 });
      assert.equal(await blobExists(store, late), false, "the gone session's claim was kept");
    }),
  },
  {
    group: "retention",
    name: "collectBlobs given an aborted signal deletes nothing and says it stopped; one never aborted changes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const orphans = {
        one: await store.putBlob(`orphan one ${freshId("o")}`),
        two: await store.putBlob(`orphan two ${freshId("o")}`),
      };
      const aborted = new AbortController();
      aborted.abort();
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: 0, signal: aborted.signal }),
        { deletedBlobs: 0, stopped: true },
        "stopped before its first page",
      );
      assert.deepEqual(await exists(store, orphans), ["one", "two"], "nothing deleted");
      assert.deepEqual(
        await store.collectBlobs({ blobGraceMs: 0, signal: new AbortController().signal }),
        { deletedBlobs: 2 },
        "no stopped key when it looked at every blob",
      );
      assert.deepEqual(await exists(store, orphans), []);
    }),
  },
  {
    group: "retention",
    name: "collectBlobs refuses bad options (invalid-argument with their path) and deletes nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const orphan = await store.putBlob(`orphan kept by refused passes ${freshId("k")}`);
      for (const [label, options, path] of [...BAD_RETENTION_OPTIONS, ...BAD_COLLECT_OPTIONS])
        await expectLedgerError(label, () => store.collectBlobs(options as CollectBlobsOptions), {
          code: "invalid-argument",
          path,
        });
      assert.equal(await blobExists(store, orphan), true, "nothing deleted");
    }),
  },
  {
    group: "retention",
    name: "collectBlobs running while writers put and append, or append carrying blobs, never takes a blob their events name",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const pool = Array.from({ length: 3 }, (_, index) => `pooled ${index} ${freshId("p")}`);
      // Old copies of the pooled content, unnamed: each pass may take them until a writer
      // re-puts one (restarting its grace) and names it.
      for (const content of pool) await store.putBlob(content);
      const orphans: string[] = [];
      for (let index = 0; index < 6; index++)
        orphans.push(await store.putBlob(`orphan ${index} ${freshId("o")}`));
      await sleep(RACE_AGE_MS);
      const written: string[] = [];
      const writer = async (index: number) => {
        const address = freshAddress();
        await store.append({ ...address, expectedSeq: 0, events: [started()] });
        for (let turn = 0; turn < 8; turn++) {
          const contents = [
            pool[turn % pool.length] as string,
            `writer ${index} turn ${turn} ${freshId("w")}`,
          ];
          const request = { ...address, expectedSeq: turn + 1 };
          let refs: string[];
          if (turn % 2 === 0) {
            // As the recorder does: the blobs travel with the append of the event naming them.
            refs = contents.map((content) => prepareBlob(content).ref);
            await store.append({
              ...request,
              events: [note({ turn }, { evidenceRefs: refs })],
              blobs: contents,
            });
          } else {
            // As a writer of its own may: put them (for its session), then append.
            refs = await Promise.all([
              store.putBlob(contents[0] as string, { sessionId: address.sessionId }),
              store.putBlob(contents[1] as string),
            ]);
            await store.append({ ...request, events: [note({ turn }, { evidenceRefs: refs })] });
          }
          written.push(...refs);
        }
      };
      let writing = true;
      let deleted = 0;
      const collector = async () => {
        while (writing) {
          deleted += (await store.collectBlobs({ blobGraceMs: RACE_GRACE_MS })).deletedBlobs;
          await sleep(3);
        }
      };
      const passes = collector();
      await Promise.all([0, 1, 2].map(writer)).finally(() => {
        writing = false;
      });
      await passes;
      deleted += (await store.collectBlobs({ blobGraceMs: RACE_GRACE_MS })).deletedBlobs;
      for (const ref of written)
        assert.equal(await blobExists(store, ref), true, `a named blob ${ref} was collected`);
      const named = Object.fromEntries(orphans.map((ref, index) => [`orphan ${index}`, ref]));
      assert.deepEqual(await exists(store, named), [], "every orphan collected");
      assert.ok(deleted >= orphans.length, `${deleted} deleted, ${orphans.length} orphans`);
    }),
  },
];
