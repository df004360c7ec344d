import assert from "node:assert/strict";
import { sha256Hex } from "../events/canonical.js";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import {
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  freshId,
  note,
  snapshot,
  started,
  withStore,
} from "./conformance-helpers.js";
import { blobExists, closed } from "./conformance-retention.js";

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Asserts the blob under `ref` holds `expected` (bytes, or a string's UTF-8). */
async function assertBlob(
  store: EventStore,
  label: string,
  ref: string,
  expected: Uint8Array | string,
): Promise<void> {
  const bytes = typeof expected === "string" ? utf8(expected) : expected;
  assert.equal(ref, `sha256:${sha256Hex(bytes)}`, `${label}: its ref`);
  const read = await store.getBlob(ref);
  assert.ok(Buffer.from(read).equals(Buffer.from(bytes)), `${label}: stored bytes differ`);
}

/** The event that names `refs`, as a writer keeping its content in blobs appends it. */
function naming(refs: string[]): NewEvent {
  return note({ refs }, { evidenceRefs: refs });
}

export const appendBlobCases: CaseFactory = (makeStore) => [
  {
    group: "blobs",
    name: "an append stores the blobs it carries with its events, claimed by its session",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      const b = freshAddress();
      const text = `kept in a blob ${freshId("t")} héllo 😀 ${"words ".repeat(400)}`;
      const binary = new Uint8Array(300);
      for (let index = 0; index < binary.length; index++) binary[index] = (index * 7) & 0xff;
      const unnamed = `carried, named by no event ${freshId("u")}`;
      const shared = `carried by A, named by B too ${freshId("s")}`;
      const [textRef, binaryRef, unnamedRef, sharedRef] = [text, binary, unnamed, shared].map(
        (content) => `sha256:${sha256Hex(typeof content === "string" ? utf8(content) : content)}`,
      ) as [string, string, string, string];
      // A new run (a writer's first append), and then its next append (where SQL stores take
      // their one-statement path), each with blobs; the same content twice is one blob.
      const first = await store.append({
        ...a,
        expectedSeq: 0,
        events: [started(), naming([textRef])],
        blobs: [text, text],
      });
      assert.equal(first.deduplicated, false);
      await assertBlob(store, "the first append's blob", textRef, text);
      const request = {
        ...a,
        expectedSeq: 2,
        events: [naming([binaryRef, sharedRef])],
        blobs: [Buffer.from(binary), shared, unnamed],
      };
      const next = await store.append(request);
      assert.deepEqual(next.events[0]?.evidenceRefs, [binaryRef, sharedRef]);
      await assertBlob(store, "binary, carried as a Buffer", binaryRef, binary);
      await assertBlob(store, "carried for B as well", sharedRef, shared);
      await assertBlob(store, "carried, named by no event", unnamedRef, unnamed);
      // A retry of the same request is deduplicated, and the blobs are still there.
      const retried = await store.append(request);
      assert.equal(retried.deduplicated, true, "a retry with its blobs is deduplicated");
      assert.deepEqual(retried.events, next.events);
      await assertBlob(store, "after the retry", binaryRef, binary);
      await store.append({ ...b, expectedSeq: 0, events: [started(), naming([sharedRef])] });
      await store.append({ ...a, expectedSeq: 3, events: [{ ...closed }] });
      const deleted = await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      assert.equal(deleted.deletedBlobs, 3, "text, binary and the unnamed one: A's alone");
      assert.equal(deleted.keptBlobs, 1, "the blob B names");
      for (const ref of [textRef, binaryRef, unnamedRef])
        assert.equal(await blobExists(store, ref), false, `${ref} collected with A`);
      assert.equal(await blobExists(store, sharedRef), true, "B's blob kept");
    }),
  },
  {
    group: "blobs",
    name: "an append refused for its blobs or its events stores none of its blobs",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      await store.append({ ...a, expectedSeq: 0, events: [started()] });
      const good = `would be stored ${freshId("g")}`;
      const goodRef = `sha256:${sha256Hex(utf8(good))}`;
      const before = await snapshot(store, a);
      for (const [label, blobs, events, code, path] of [
        ["blobs not an array", 42, [naming([goodRef])], "invalid-event", "$.blobs"],
        ["blobs null", null, [naming([goodRef])], "invalid-event", "$.blobs"],
        [
          "a bad blob after a good one",
          [good, 42],
          [naming([goodRef])],
          "invalid-event",
          "$.blobs[1]",
        ],
        [
          "a lone surrogate",
          [good, "x\uD800"],
          [naming([goodRef])],
          "non-serializable",
          "$.blobs[1]",
        ],
        [
          "a bad event",
          [good],
          [{ ...naming([goodRef]), type: "" }],
          "invalid-event",
          "$.events[0].type",
        ],
        [
          "a bad ref",
          [good],
          [naming(["sha256:abc"])],
          "invalid-event",
          "$.events[0].evidenceRefs[0]",
        ],
      ] as const) {
        await expectLedgerError(
          label,
          () =>
            store.append({
              ...a,
              expectedSeq: 1,
              events: events as unknown as NewEvent[],
              blobs: blobs as never,
            }),
          { code, path },
        );
        assert.equal(await blobExists(store, goodRef), false, `${label}: no blob stored`);
      }
      await assertUnchanged("refused appends with blobs", store, a, before);
    }),
  },
  {
    group: "blobs",
    name: "an append refused by the run (conflict, closed) leaves its blobs absent or claimed by the session",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const a = freshAddress();
      await store.append({ ...a, expectedSeq: 0, events: [started()] });
      const stale = `sent at a stale position ${freshId("c")}`;
      const staleRef = `sha256:${sha256Hex(utf8(stale))}`;
      await expectLedgerError(
        "stale expectedSeq",
        () => store.append({ ...a, expectedSeq: 0, events: [naming([staleRef])], blobs: [stale] }),
        { code: "conflict" },
      );
      assert.equal((await store.runHead(a)).length, 1, "nothing appended");
      await store.append({ ...a, expectedSeq: 1, events: [{ ...closed }] });
      const late = `sent to a closed run ${freshId("l")}`;
      const lateRef = `sha256:${sha256Hex(utf8(late))}`;
      await expectLedgerError(
        "closed run",
        () => store.append({ ...a, expectedSeq: 2, events: [naming([lateRef])], blobs: [late] }),
        { code: "run-closed" },
      );
      // Where a store put them first (Redis), the session claims them: its deletion takes them.
      await store.deleteSession(a.sessionId, { blobGraceMs: 0 });
      assert.equal(await blobExists(store, staleRef), false, "the conflicting append's blob");
      assert.equal(await blobExists(store, lateRef), false, "the closed run's blob");
    }),
  },
];
