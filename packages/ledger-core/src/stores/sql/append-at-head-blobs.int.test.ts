import { expect, it, vi } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import type { EventStore } from "../../store/event-store.js";
import {
  appendAtOnce,
  closeAndDelete,
  describeEachKind,
  event,
  gatheredWith,
  runsOf,
  sentIn,
  startRuns,
  twoStoresWatched,
} from "./testing/cached-head-stores.js";
import { checkSession, checkSharedBlobWriters } from "./testing/shared-blob-writers.js";

// The one-round-trip append a SQL store uses when a writer continues the run where the store's
// own last append left it (a cached head). Several store instances on one database stand for
// several processes: each one's cache goes stale when another writes.
// Here: appends that name or carry blobs, alone and gathered in one statement.

describeEachKind((kind) => {
  it("appends that name blobs take the one-statement path of the others, and index the blobs for their session", async () => {
    const { open } = await kind.database();
    // Watched before the stores are made: a store binds the method when constructed.
    const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
    const store = await open();
    const putBlobs = store.putBlobs?.bind(store) as NonNullable<EventStore["putBlobs"]>;
    const sessionId = `refs-${uuidv7()}`;
    const runs = ["a", "b", "c", "d"];
    const written = await startRuns(store, runsOf(sessionId, runs));
    // Put with no session: only the appends' index keeps these blobs from collectBlobs.
    const [own1, own2, shared, later] = await putBlobs(
      ["own 1", "own 2", "shared", "later"].map((text) => `${text} ${uuidv7()}`),
    );
    const named = (refs: (string | undefined)[]) =>
      ({ type: "x.named", evidenceRefs: refs as string[] }) as never;
    const write = vi.spyOn(kind.backend.prototype, "write");
    try {
      // In one tick: two appends that name blobs, two that do not, on four runs.
      const answers = await appendAtOnce(
        store,
        [
          { sessionId, runId: "a", expectedSeq: 1, events: [named([own1, shared])] },
          { sessionId, runId: "b", expectedSeq: 1, events: [event("x.plain")] },
          {
            sessionId,
            runId: "c",
            expectedSeq: 1,
            events: [named([shared, own2]), event("x.plain")],
          },
          { sessionId, runId: "d", expectedSeq: 1, events: [event("x.plain")] },
        ],
        written,
      );
      for (const answer of answers) expect(answer).toMatchObject({ deduplicated: false });
      const alone = await store.append({
        sessionId,
        runId: "a",
        expectedSeq: 2,
        events: [named([later])],
      });
      written.push(...alone.events);
      // No append went the transactional way; those naming blobs went where the others go
      // (gathered into statements of several when enough arrive at once: see below).
      expect(write).not.toHaveBeenCalled();
      expect(sentIn(batches).filter((append) => append.refs.length > 0)).toHaveLength(3);
    } finally {
      write.mockRestore();
      batches.mockRestore();
    }
    await checkSession(store, sessionId, written);
    expect(await store.collectBlobs?.({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
    expect(await closeAndDelete(store, sessionId, runs)).toMatchObject({
      deletedBlobs: 4,
    });
  });

  it("appends that carry blobs store them in the statement they go out in: no put, no program", async () => {
    const { open } = await kind.database();
    // Watched before the stores are made: a store binds the method when constructed.
    const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
    const store = await open();
    const other = await open();
    const sessionId = `carried-${uuidv7()}`;
    const runs = ["a", "b", "c", "d"];
    const written = await startRuns(store, runsOf(sessionId, runs));
    const contents = ["a1", "a2", "c1", "d1", "d2", "d3", "later"].map(
      (text) => `${text} ${uuidv7()} ${"words ".repeat(50)}`,
    );
    const ref = (index: number) => `sha256:${sha256Hex(contents[index] as string)}`;
    const named = (refs: string[]) => ({ type: "x.named", evidenceRefs: refs }) as never;
    const put = vi.spyOn(kind.backend.prototype, "putBlobs");
    const write = vi.spyOn(kind.backend.prototype, "write");
    try {
      const answers = await appendAtOnce(
        store,
        [
          {
            sessionId,
            runId: "a",
            expectedSeq: 1,
            events: [named([ref(0), ref(1)])],
            blobs: [contents[0] as string, contents[1] as string],
          },
          { sessionId, runId: "b", expectedSeq: 1, events: [event("x.plain")] },
          {
            sessionId,
            runId: "c",
            expectedSeq: 1,
            events: [named([ref(2)]), event("x.plain")],
            blobs: [contents[2] as string],
          },
          {
            sessionId,
            runId: "d",
            expectedSeq: 1,
            // d3 is carried but named by no event: claimed by the session all the same.
            events: [named([ref(3), ref(4)])],
            blobs: [contents[3] as string, contents[4] as string, contents[5] as string],
          },
        ],
        written,
      );
      for (const answer of answers) expect(answer).toMatchObject({ deduplicated: false });
      const alone = await store.append({
        sessionId,
        runId: "a",
        expectedSeq: 2,
        events: [named([ref(6)])],
        blobs: [contents[6] as string],
      });
      written.push(...alone.events);
      expect(write).not.toHaveBeenCalled();
      expect(put).not.toHaveBeenCalled();
      expect(sentIn(batches).filter((append) => append.blobs.length > 0)).toHaveLength(4);
      // A stale head (another store wrote the run): refused, and nothing of it stored.
      await other.append({ sessionId, runId: "b", expectedSeq: 2, events: [event("x.plain")] });
      const late = `late ${uuidv7()}`;
      await expect(
        store.append({
          sessionId,
          runId: "b",
          expectedSeq: 2,
          events: [named([`sha256:${sha256Hex(late)}`])],
          blobs: [late],
        }),
      ).rejects.toMatchObject({ code: "conflict" });
      await expect(store.getBlob(`sha256:${sha256Hex(late)}`)).rejects.toMatchObject({
        code: "not-found",
      });
    } finally {
      put.mockRestore();
      write.mockRestore();
      batches.mockRestore();
    }
    for (let index = 0; index < contents.length; index++)
      expect(new TextDecoder().decode(await store.getBlob(ref(index)))).toBe(contents[index]);
    // Only the session's claims keep them: nothing for collectBlobs at grace 0.
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
    expect(await closeAndDelete(store, sessionId, runs)).toMatchObject({
      deletedBlobs: contents.length,
    });
  });

  it("in one statement, blobs carried are stored once, only for appends written", async () => {
    await twoStoresWatched(kind, async (a, b, spy) => {
      // Nine runs, each of its own session where one statement takes several (MariaDB), of one
      // session otherwise; nine, so that statements carry several appends however the store
      // shares them out.
      const session = `once-${uuidv7()}`;
      const places = Array.from({ length: 9 }, (_, index) =>
        kind.acrossSessions
          ? { sessionId: `s${index}-${uuidv7()}`, runId: "r" }
          : { sessionId: session, runId: `r${index}` },
      );
      await startRuns(a, places);
      // B moves the third run: A's cached head for it is stale, its append a conflict.
      await b.append({
        ...(places[2] as (typeof places)[number]),
        expectedSeq: 1,
        events: [event("x.b")],
      });
      const text = (label: string) => `${label} ${uuidv7()} ${"words ".repeat(40)}`;
      const shared = text("the system prompt every run carries");
      const own = places.map((_, index) => text(`own ${index}`));
      const refOf = (content: string) => `sha256:${sha256Hex(content)}`;
      const answers = await appendAtOnce(
        a,
        places.map((place, index) => ({
          ...place,
          expectedSeq: 1,
          events: [
            { type: "x.named", evidenceRefs: [refOf(shared), refOf(own[index] as string)] },
          ] as never,
          blobs: [own[index] as string, shared],
        })),
        [],
      );
      expect(gatheredWith(spy, (append) => append.blobs.length > 0)).toBe(true);
      expect(LedgerError.isInstance(answers[2], "conflict")).toBe(true);
      await expect(a.getBlob(refOf(own[2] as string))).rejects.toMatchObject({
        code: "not-found",
      });
      for (const index of places.keys()) {
        if (index === 2) continue;
        expect(answers[index]).toMatchObject({ deduplicated: false });
        expect(new TextDecoder().decode(await a.getBlob(refOf(own[index] as string)))).toBe(
          own[index],
        );
      }
      expect(new TextDecoder().decode(await a.getBlob(refOf(shared)))).toBe(shared);
      expect(await a.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
    });
  });

  it("two stores writing runs of four sessions, every append carrying blobs others carry too: each written once, every blob kept", async () => {
    await twoStoresWatched(kind, async (a, b, spy, database) => {
      await checkSharedBlobWriters([a, b], `shared-blobs-${database}`);
      expect(gatheredWith(spy, (append) => append.blobs.length > 0)).toBe(true);
    });
  });
});
