import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";
import pg from "pg";
import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import type { EventStore } from "../../store/event-store.js";
import { storedBytes } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";
import { BLOBS_PER_PAGE } from "./write-program.js";

// collectBlobs on the SQL stores runs in pages of BLOBS_PER_PAGE blobs, each a transaction of
// its own: a pass over more blobs than a page collects all of them and counts them once, with
// the blobs to keep (named by a live session's event, put for a live session that has not
// named them yet, put within the grace) scattered over the pages by their digests, and the
// index rows of sessions that are gone deleted with their blobs, on whichever page they fall.

// The "recent" blobs must stay inside the grace through both passes over 1,000 blobs and
// more, which took longer than 200 ms on a loaded machine (the second pass then collected them).
const GRACE_MS = 2000;
const AGE_MS = GRACE_MS + 300;

/** Which of `refs` the store still holds. */
async function stored(store: EventStore, refs: string[]): Promise<string[]> {
  const found = await (store.getBlobs as NonNullable<EventStore["getBlobs"]>)(refs);
  return refs.filter((ref) => found.has(ref));
}

function contents(label: string, count: number): string[] {
  const tag = uuidv7();
  return Array.from({ length: count }, (_, index) => `${label} ${index} ${tag}`);
}

/** A session whose open run holds one event naming `refs` (none: `run.started` alone). */
async function liveSession(store: EventStore, refs: string[] = []): Promise<string> {
  const sessionId = `live-${uuidv7()}`;
  await store.append({
    sessionId,
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started", evidenceRefs: refs }],
  });
  return sessionId;
}

/** A session written, closed and deleted: what it claims afterwards is a gone session's. */
async function goneSession(store: EventStore): Promise<string> {
  const sessionId = `gone-${uuidv7()}`;
  await store.append({
    sessionId,
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started" }, { type: "run.completed", payload: {} }],
  });
  await store.deleteSession(sessionId, { blobGraceMs: 0 });
  return sessionId;
}

async function checkPagedCollection(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  const putBlobs = store.putBlobs?.bind(store) as NonNullable<EventStore["putBlobs"]>;
  try {
    // More orphans than two pages hold, so the pass takes three pages at least.
    const orphanContents = contents("orphan", 2 * BLOBS_PER_PAGE + 37);
    const orphans = await putBlobs(orphanContents);
    const named = await putBlobs(contents("named", 15));
    await liveSession(store, named);
    const live = await liveSession(store);
    const putForLive = await putBlobs(contents("put for live", 15), { sessionId: live });
    const gone = await goneSession(store);
    const goneContents = contents("put for gone", 15);
    const putForGone = await putBlobs(goneContents, { sessionId: gone });
    await sleep(AGE_MS);
    const recent = await putBlobs(contents("recent", 15));

    // A dry run counts across the pages what the pass then deletes, and deletes nothing.
    expect(await store.collectBlobs({ blobGraceMs: GRACE_MS, dryRun: true })).toEqual({
      deletedBlobs: 0,
      wouldDelete: {
        blobs: orphans.length + putForGone.length,
        bytes: storedBytes([...orphanContents, ...goneContents]),
      },
    });
    expect(await stored(store, [...orphans, ...putForGone])).toHaveLength(
      orphans.length + putForGone.length,
    );
    const first = await store.collectBlobs({ blobGraceMs: GRACE_MS });
    expect(first).toEqual({ deletedBlobs: orphans.length + putForGone.length });
    expect(await stored(store, [...orphans, ...putForGone])).toEqual([]);
    const claimed = [...named, ...putForLive];
    expect(await stored(store, [...claimed, ...recent])).toEqual([...claimed, ...recent]);
    expect(await store.collectBlobs({ blobGraceMs: GRACE_MS })).toEqual({ deletedBlobs: 0 });

    // The gone session's claims went with its blobs: with its id back as a new session that
    // names nothing, the same content put again without a session is collected.
    await store.append({
      sessionId: gone,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    expect(await putBlobs(goneContents)).toEqual(putForGone);
    const last = await store.collectBlobs({ blobGraceMs: 0 });
    expect(last).toEqual({ deletedBlobs: putForGone.length + recent.length });
    expect(await stored(store, [...putForGone, ...recent])).toEqual([]);
    expect(await stored(store, claimed)).toEqual(claimed);
  } finally {
    await store.close();
  }
}

await acrossStores(
  {
    topic: "collectBlobs in pages",
    test: "collects more blobs than a page holds, keeps the claimed and recent ones, forgets gone sessions' claims",
    label: "collect",
    kinds: ["sqlite", "postgres", "mysql"],
  },
  checkPagedCollection,
);

/**
 * The pool of a store whose next put stops after its first statement that writes (an INSERT,
 * or the one statement, a CTE or a compound block, that writes blobs and claims together) until
 * `release` is called: `paused` resolves when it has stopped there. `connectionMethods` are
 * wrapped on the connections the pool hands out too (a put that takes one of its own).
 */
function pausingAfterFirstInsert<Pool extends object>(
  pool: Pool,
  methods: readonly string[],
  connectionMethods: readonly string[] = [],
): { pool: Pool; arm(): { paused: Promise<void>; release(): void } } {
  let gate: { stopped: () => void; wait: Promise<void> } | undefined;
  type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;
  const pausing = (target: object, names: readonly string[]) => {
    const record = target as Methods;
    for (const method of names) {
      const original = record[method]?.bind(target);
      if (original === undefined) throw new Error(`the pool has no ${method}`);
      record[method] = async (...args: unknown[]) => {
        const first = args[0] as string | { text?: string; sql?: string };
        const text = typeof first === "string" ? first : (first.text ?? first.sql ?? "");
        const result = await original(...args);
        const current = gate;
        if (current !== undefined && /^\s*(insert|with|begin not atomic)/i.test(text)) {
          gate = undefined;
          current.stopped();
          await current.wait;
        }
        return result;
      };
    }
  };
  pausing(pool, methods);
  if (connectionMethods.length > 0) {
    const record = pool as unknown as Methods;
    const getConnection = record.getConnection?.bind(pool);
    if (getConnection === undefined) throw new Error("the pool has no getConnection");
    const wrapped = new WeakSet<object>();
    record.getConnection = async (...args: unknown[]) => {
      const connection = (await getConnection(...args)) as object;
      if (!wrapped.has(connection)) {
        wrapped.add(connection);
        pausing(connection, connectionMethods);
      }
      return connection;
    };
  }
  return {
    pool,
    arm() {
      let stopped = () => {};
      let release = () => {};
      const paused = new Promise<void>((resolve) => {
        stopped = resolve;
      });
      const wait = new Promise<void>((resolve) => {
        release = resolve;
      });
      gate = { stopped, wait };
      return { paused, release };
    },
  };
}

/**
 * A put for a session re-stores a blob that is past the grace and claimed by no live session,
 * and a collectBlobs page runs right after the put's first statement that writes. The put's
 * claim must survive: once the session lives, the blob is its own. When the claim went first,
 * in a statement of its own, the page deleted the blob with the claim, the put's blob statement
 * stored the blob again unclaimed, and a later pass took it from under the live session. A put
 * now writes blob and claim in one statement, so the claim is there already at the pause.
 */
async function checkPutClaimSurvivesPage(target: RacerTarget): Promise<void> {
  const grace = 600;
  let writer: EventStore;
  let arm: () => { paused: Promise<void>; release(): void };
  let endPool: () => Promise<void>;
  /** Whether `sessionId`'s claim on `ref` is stored (read beside the stores, not through them). */
  let claimed: (ref: string, sessionId: string) => Promise<boolean>;
  if (target.kind === "postgres") {
    claimed = async (ref, sessionId) => {
      const client = new pg.Client({ connectionString: target.location });
      await client.connect();
      try {
        const found = await client.query(
          `SELECT 1 FROM "${target.schema}".blob_refs WHERE blob_ref = $1 AND session_id = $2`,
          [ref, sessionId],
        );
        return found.rowCount === 1;
      } finally {
        await client.end();
      }
    };
    const { PostgresEventStore } = await import("../postgres/index.js");
    const pausing = pausingAfterFirstInsert(new pg.Pool({ connectionString: target.location }), [
      "query",
    ]);
    arm = pausing.arm;
    endPool = () => pausing.pool.end();
    writer = new PostgresEventStore({ pool: pausing.pool, schema: target.schema as string });
  } else {
    claimed = async (ref, sessionId) => {
      const connection = await mysql.createConnection(target.location);
      try {
        const [rows] = (await connection.query(
          "SELECT 1 FROM blob_refs WHERE blob_ref = ? AND session_id = ?",
          [ref, sessionId],
        )) as unknown as [unknown[]];
        return rows.length === 1;
      } finally {
        await connection.end();
      }
    };
    const { MysqlEventStore } = await import("../mysql/index.js");
    const pausing = pausingAfterFirstInsert(
      mysql.createPool({ uri: target.location }),
      ["query", "execute"],
      ["query", "execute"],
    );
    arm = pausing.arm;
    endPool = () => pausing.pool.end();
    writer = new MysqlEventStore({ pool: pausing.pool });
  }
  const sweeper = await openRacerStore(target);
  try {
    await writer.init();
    await sweeper.init();
    const content = `put again for a session ${uuidv7()}`;
    const ref = await writer.putBlob(content);
    await sleep(grace + 300);

    const gate = arm();
    const sessionId = `late-${uuidv7()}`;
    const put = writer.putBlob(content, { sessionId });
    await gate.paused;
    // The statement that wrote the blob wrote its claim too.
    expect(await claimed(ref, sessionId)).toBe(true);
    const between = await sweeper.collectBlobs({ blobGraceMs: grace });
    gate.release();
    expect(await put).toBe(ref);
    expect(between).toEqual({ deletedBlobs: 0 });

    await liveSessionNamed(writer, sessionId);
    await sleep(grace + 300);
    expect(await sweeper.collectBlobs({ blobGraceMs: grace })).toEqual({ deletedBlobs: 0 });
    expect(await stored(sweeper, [ref])).toEqual([ref]);
  } finally {
    await sweeper.close();
    await writer.close();
    await endPool();
  }
}

/** `sessionId` made live: an open run with one event that names nothing. */
async function liveSessionNamed(store: EventStore, sessionId: string): Promise<void> {
  await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [{ type: "run.started" }] });
}

await acrossStores(
  {
    topic: "putBlob for a session against collectBlobs",
    test: "keeps the put's claim when a collectBlobs page runs right after the put's first statement",
    label: "put_claim",
    kinds: ["postgres", "mysql"],
  },
  checkPutClaimSurvivesPage,
);
