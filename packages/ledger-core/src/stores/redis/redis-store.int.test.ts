import { createHash, randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { computeEventHash } from "../../events/hash-chain.js";
import type { NewEvent } from "../../events/types.js";
import type { AppendRequest } from "../../store/event-store.js";
import { openStore } from "../../store/open-store.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { checkLargeBatch } from "../../testing/large-batch.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { checkSharedBlobWriters } from "../sql/testing/shared-blob-writers.js";
import { blobKeys, idField, runKeys, sessionKeys, sessionMember, sessionsKey } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { APPEND_BATCH_SCRIPT, APPEND_SCRIPT } from "./scripts.js";
import { localClusterUnavailable, startLocalRedis } from "./testing/local-cluster.js";
import { deleteKeys, freshPrefix, keysUnder } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const prefix = freshPrefix("store");
  /** Prefixes of extra stores, deleted after the file even when a test failed. */
  const extraPrefixes: string[] = [];
  let store: RedisEventStore;
  let admin: Redis;

  beforeAll(async () => {
    store = new RedisEventStore({ url, keyPrefix: prefix });
    await store.init();
    admin = new Redis(url);
  });

  afterAll(async () => {
    await store?.close();
    admin?.disconnect();
    await deleteKeys(url, prefix);
    for (const extra of extraPrefixes) await deleteKeys(url, extra);
  });

  const started = (eventId?: string): NewEvent => ({
    ...(eventId === undefined ? {} : { eventId }),
    type: "run.started",
    actor: { type: "agent", id: "a1" },
    payload: { goal: "test" },
  });

  /**
   * `body` with a store on a client whose EVALSHA calls it watches, and another store on the
   * same prefix (another process); all closed after, whatever happened.
   */
  async function watchedStores(
    body: (watched: {
      client: Redis;
      own: RedisEventStore;
      other: RedisEventStore;
      evalsha: MockInstance<Redis["evalsha"]>;
    }) => Promise<void>,
  ): Promise<void> {
    const client = new Redis(url);
    const own = new RedisEventStore({ client, keyPrefix: prefix });
    const other = new RedisEventStore({ url, keyPrefix: prefix });
    await own.init();
    const evalsha = vi.spyOn(client, "evalsha");
    try {
      await body({ client, own, other, evalsha });
    } finally {
      evalsha.mockRestore();
      await own.close();
      await other.close();
      client.disconnect();
    }
  }

  it("two stores on one prefix (two processes) answer random sequences as the reference does, and racing writers through both lose nothing", async () => {
    // Each caches the run heads of its own appends: the other's writes must show.
    const shared = freshPrefix("two");
    extraPrefixes.push(shared);
    const handles = [1, 2].map(() => new RedisEventStore({ url, keyPrefix: shared }));
    await checkSharedHandles(handles);
  });

  it("init({ create: false }) writes no key where there is no ledger, and opens one that is there", async () => {
    const keyPrefix = freshPrefix("ro");
    extraPrefixes.push(keyPrefix);
    await checkInitWithoutCreate({
      open: () => new RedisEventStore({ url, keyPrefix }),
      leftovers: async () => (await keysUnder(admin, keyPrefix)).length,
    });
  });

  it("refuses a database the server does not have, writing nothing (ioredis would go on in database 0)", async () => {
    const keyPrefix = freshPrefix("no-db");
    extraPrefixes.push(keyPrefix);
    const missing = new URL(url);
    missing.pathname = "/99";
    const stranded = new RedisEventStore({ url: missing.toString(), keyPrefix });
    try {
      const failure = await stranded.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failure as { code?: string }).code).toBe("store-unavailable");
      expect((failure as Error).message).toContain("no database 99");
    } finally {
      await stranded.close();
    }
    expect(await keysUnder(admin, keyPrefix)).toEqual([]);
  });

  it("round-trips events verbatim: 1 MiB payload, unicode, NUL", async () => {
    const big = "x".repeat(1024 * 1024);
    const odd = "nul:\u0000 é 中文 🧪 \u2028 \\ \" '";
    const events: NewEvent[] = [
      started("e0"),
      {
        eventId: "e1",
        type: "model.requested",
        stepId: "step 1",
        attemptId: "att",
        payload: { big, odd, nested: [1, 2.5, -3, null, true, { [odd]: odd }] },
        metadata: { host: odd },
      },
    ];
    const result = await store.append({ sessionId: "rt", runId: "r", expectedSeq: 0, events });
    expect(result.deduplicated).toBe(false);
    expect(result.events.map((event) => event.commitCursor)).toEqual([1, 2]);
    expect(result.events[1]?.payload).toEqual(events[1]?.payload);
    expect(result.events[1]?.metadata).toEqual({ host: odd });
    const run = await store.readRun({ sessionId: "rt", runId: "r" });
    expect(run.events).toEqual(result.events);
    const session = await store.readSession({ sessionId: "rt" });
    expect(session.events).toEqual(result.events);
    expect(session.nextCursor).toBe(2);
    expect((run.events[1]?.payload as { big?: string } | undefined)?.big?.length).toBe(1024 * 1024);
    expect(await store.runHead({ sessionId: "rt", runId: "r" })).toEqual({
      exists: true,
      length: 2,
      status: "running",
      lastHash: result.events[1]?.hash,
    });
  });

  it("a password the server refuses stays out of the error, its cause included (which ioredis gives the AUTH command's arguments)", async () => {
    const secret = `pw-${randomBytes(6).toString("hex")}`;
    const refused = new URL(url);
    refused.username = "agent-ledger-no-such-user";
    refused.password = secret;
    const stranded = new RedisEventStore({
      url: refused.toString(),
      keyPrefix: freshPrefix("auth"),
    });
    try {
      const failure = await stranded.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: "store-unavailable" });
      expect((failure as Error).message).toContain("WRONGPASS");
      // What console.error(error) prints: the error, its cause and their properties.
      expect(inspect(failure, { depth: 10 })).not.toContain(secret);
    } finally {
      await stranded.close();
    }
  });

  it("rejects bad input before any I/O", async () => {
    const offline = new RedisEventStore({ url: "redis://127.0.0.1:1", keyPrefix: prefix });
    await expect(
      offline.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", payload: { f: () => 1 } as never }],
      }),
    ).rejects.toMatchObject({ code: "non-serializable", path: "$.events[0].payload.f" });
    await expect(
      offline.append({ sessionId: "a\nb", runId: "r", expectedSeq: 0, events: [started()] }),
    ).rejects.toMatchObject({ code: "invalid-event" });
    await offline.close();
  });

  it("reports conflict with the actual seq and writes nothing", async () => {
    await store.append({ sessionId: "cf", runId: "r", expectedSeq: 0, events: [started()] });
    const error = await store
      .append({ sessionId: "cf", runId: "r", expectedSeq: 0, events: [started()] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "conflict", actualSeq: 1, expectedSeq: 0 });
    await expect(
      store.append({
        sessionId: "cf",
        runId: "r",
        expectedSeq: 5,
        events: [{ type: "model.requested" }],
      }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 1 });
    expect((await store.readSession({ sessionId: "cf" })).events).toHaveLength(1);
  });

  it("deduplicates a retried batch, even on a closed run, and writes nothing twice", async () => {
    const batch: NewEvent[] = [started("d0"), { eventId: "d1", type: "run.completed" }];
    const first = await store.append({
      sessionId: "dd",
      runId: "r",
      expectedSeq: 0,
      events: batch,
    });
    const again = await store.append({
      sessionId: "dd",
      runId: "r",
      expectedSeq: 0,
      events: batch,
    });
    expect(again).toEqual({ events: first.events, deduplicated: true });
    // A second store (no cached head) sees the same.
    const other = new RedisEventStore({ url, keyPrefix: prefix });
    expect(
      await other.append({ sessionId: "dd", runId: "r", expectedSeq: 2, events: batch }),
    ).toEqual({ events: first.events, deduplicated: true });
    await other.close();
    expect((await store.readSession({ sessionId: "dd" })).events).toHaveLength(2);
  });

  // The connection can drop after the append script committed and before the session index
  // names the session: CLIENT KILL cannot hit that instant, so the client's ZADD fails once.
  it("lists a session whose first append lost its connection before listing it, when a retry finds the batch stored", async () => {
    const client = new Redis(url);
    const lossy = new RedisEventStore({ client, keyPrefix: prefix });
    await lossy.init();
    const zadd = client.zadd.bind(client);
    let drops = 1;
    client.zadd = ((...args: Parameters<typeof zadd>) =>
      drops-- > 0
        ? Promise.reject(new Error("Connection is closed."))
        : zadd(...args)) as typeof zadd;
    const request = {
      sessionId: "lost-listing",
      runId: "r",
      expectedSeq: 0,
      events: [started("ll0"), { eventId: "ll1", type: "run.completed" } as NewEvent],
    };
    const sessions = async () =>
      (await store.listSessions({ limit: 1000 })).sessions.map((session) => session.sessionId);
    try {
      await expect(lossy.append(request)).rejects.toMatchObject({ code: "store-unavailable" });
      expect((await store.readSession({ sessionId: "lost-listing" })).events).toHaveLength(2);
      expect(await sessions()).not.toContain("lost-listing");
      // The retry (here through a store with no cached head) finds the batch and lists it.
      const other = new RedisEventStore({ client, keyPrefix: prefix });
      expect(await other.append(request)).toMatchObject({ deduplicated: true });
      expect(await sessions()).toContain("lost-listing");
      expect((await store.readSession({ sessionId: "lost-listing" })).events).toHaveLength(2);
    } finally {
      client.disconnect();
    }
  });

  it("refuses an event id reused with other content, in another run, or in part", async () => {
    await store.append({ sessionId: "dup", runId: "r", expectedSeq: 0, events: [started("x")] });
    await expect(
      store.append({
        sessionId: "dup",
        runId: "r",
        expectedSeq: 0,
        events: [{ ...started("x"), payload: { goal: "other" } }],
      }),
    ).rejects.toMatchObject({ code: "duplicate-event", path: "$.events[0].eventId" });
    await expect(
      store.append({ sessionId: "dup", runId: "r2", expectedSeq: 0, events: [started("x")] }),
    ).rejects.toMatchObject({ code: "duplicate-event" });
    await expect(
      store.append({
        sessionId: "dup",
        runId: "r",
        expectedSeq: 1,
        events: [{ eventId: "new", type: "input.received" }, started("x")],
      }),
    ).rejects.toMatchObject({ code: "duplicate-event", path: "$.events[1].eventId" });
    expect(await store.listRuns("dup")).toHaveLength(1);
    expect((await store.readSession({ sessionId: "dup" })).events).toHaveLength(1);
  });

  it("closes a run on a terminal event", async () => {
    await store.append({
      sessionId: "cl",
      runId: "r",
      expectedSeq: 0,
      events: [started(), { type: "run.failed", payload: { reason: "x" } }],
    });
    await expect(
      store.append({ sessionId: "cl", runId: "r", expectedSeq: 2, events: [started()] }),
    ).rejects.toMatchObject({ code: "run-closed" });
    await expect(
      store.append({
        sessionId: "cl",
        runId: "r2",
        expectedSeq: 0,
        events: [started(), { type: "run.completed" }, { type: "input.received" }],
      }),
    ).rejects.toMatchObject({ code: "run-closed" });
    expect(await store.runHead({ sessionId: "cl", runId: "r" })).toMatchObject({
      status: "failed",
      length: 2,
    });
    expect(await store.runHead({ sessionId: "cl", runId: "r2" })).toMatchObject({
      exists: false,
    });
  });

  it("never trusts its cached head over the script's view of the run", async () => {
    const other = new RedisEventStore({ url, keyPrefix: prefix });
    const a = await store.append({
      sessionId: "rp",
      runId: "r",
      expectedSeq: 0,
      events: [started()],
    });
    const b = await other.append({
      sessionId: "rp",
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "input.received", payload: "from b" }],
    });
    // `store` still caches length 1; the caller read length 2 elsewhere and is right.
    const c = await store.append({
      sessionId: "rp",
      runId: "r",
      expectedSeq: 2,
      events: [{ type: "input.received", payload: "from a" }],
    });
    expect(c.events[0]?.seq).toBe(2);
    expect(c.events[0]?.prevHash).toBe(b.events[0]?.hash);
    expect(b.events[0]?.prevHash).toBe(a.events[0]?.hash);
    // `store` caches length 3; another writer appends; a stale writer through `store` loses.
    await other.append({ sessionId: "rp", runId: "r", expectedSeq: 3, events: [started()] });
    await expect(
      store.append({ sessionId: "rp", runId: "r", expectedSeq: 3, events: [started()] }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 4 });
    expect((await store.readRun({ sessionId: "rp", runId: "r" })).events).toHaveLength(4);
    await other.close();
  });

  it("gathers concurrent appends, of one session or several, into one script call, each answered as alone", async () => {
    await watchedStores(async ({ own, other, evalsha }) => {
      const runs = ["r0", "r1", "r2", "r3", "r4"];
      for (const runId of runs)
        await own.append({ sessionId: "group", runId, expectedSeq: 0, events: [started()] });
      // Another store moves r3: `own` caches a stale head for it.
      await other.append({
        sessionId: "group",
        runId: "r3",
        expectedSeq: 1,
        events: [{ type: "input.received", payload: "other" }],
      });
      evalsha.mockClear();
      // Submitted in one tick: one script starts at once; of the four that wait, a batch takes
      // its share of the five over two slots (3), the last goes once a slot is free. r3's
      // expectedSeq is right (2) though `own` believed 1: the script refuses its stale view
      // and the store writes it again on the script's own view.
      const results = await Promise.all(
        runs.map((runId) =>
          own.append({
            sessionId: "group",
            runId,
            expectedSeq: runId === "r3" ? 2 : 1,
            events: [{ type: "input.received", payload: runId }],
          }),
        ),
      );
      const batches = evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha);
      expect(batches).toHaveLength(1);
      // Keys and ARGV go as one array: 3 x 6 keys, then the number of calls.
      const keysAndArgs = batches[0]?.[2] as unknown as (string | number)[];
      expect(batches[0]?.[1]).toBe(18);
      expect(String(keysAndArgs[18])).toBe("3");
      results.forEach((result, index) => {
        expect(result.deduplicated).toBe(false);
        expect(result.events[0]?.seq).toBe(index === 3 ? 2 : 1);
      });
      // On one server, appends of other sessions share a call too (on a Cluster they cannot:
      // a script's keys must share a slot). g1 starts alone, g2 and g3 go together.
      evalsha.mockClear();
      const sessions = await Promise.all(
        ["g1", "g2", "g3", "g4"].map((sessionId) =>
          own.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] }),
        ),
      );
      const mixed = evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha);
      expect(mixed).toHaveLength(1);
      const mixedKeys = ((mixed[0]?.[2] ?? []) as unknown as string[]).slice(0, 12);
      expect(new Set(mixedKeys.map((key) => key.slice(0, key.indexOf("}") + 1))).size).toBe(2);
      for (const [index, result] of sessions.entries()) {
        const stored = await own.readSession({ sessionId: `g${index + 1}` });
        expect(stored.events).toEqual(result.events);
      }
      const session = (await own.readSession({ sessionId: "group" })).events;
      expect(session.map((event) => event.commitCursor)).toEqual(
        Array.from({ length: 11 }, (_, index) => index + 1),
      );
      for (const result of results) {
        const stored = session.find((event) => event.eventId === result.events[0]?.eventId);
        expect(stored).toEqual(result.events[0]);
      }
      for (const runId of runs) {
        const run = (await own.readRun({ sessionId: "group", runId })).events;
        run.forEach((event, index) => {
          expect(event.seq).toBe(index);
          expect(event.prevHash).toBe(index === 0 ? null : run[index - 1]?.hash);
          expect(computeEventHash(event)).toBe(event.hash);
        });
      }
    });
  });

  it("a script call of appends carrying, naming or without blobs stores each append's blobs only if it writes it", async () => {
    await watchedStores(async ({ own, other, evalsha }) => {
      const tag = randomBytes(4).toString("hex");
      const sessions = ["b0", "b1", "b2", "b3", "b4"].map((name) => `${name}-${tag}`);
      for (const sessionId of sessions)
        await own.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
      // Another store moves b3's run: `own` caches a stale head for it.
      await other.append({
        sessionId: sessions[3] as string,
        runId: "r",
        expectedSeq: 1,
        events: [{ type: "input.received", payload: "other" }],
      });
      const text = (label: string) => `${label} ${tag} ${"words ".repeat(30)}`;
      const refOf = (content: string) =>
        `sha256:${createHash("sha256").update(content).digest("hex")}`;
      const [shared, own0, own3, own4, before] = ["shared", "own0", "own3", "own4", "before"].map(
        text,
      ) as [string, string, string, string, string];
      await own.putBlob(before);
      // What each append carries (stored by its script) and names (claimed by its session).
      const shapes: { blobs: string[]; named: string[] }[] = [
        { blobs: [own0, shared, own0], named: [own0, shared] },
        { blobs: [], named: [shared] },
        { blobs: [], named: [] },
        { blobs: [own3], named: [own3] },
        { blobs: [own4], named: [before] },
      ];
      evalsha.mockClear();
      const results = await Promise.all(
        sessions.map((sessionId, index) => {
          const { blobs, named } = shapes[index] as (typeof shapes)[number];
          return own.append({
            sessionId,
            runId: "r",
            expectedSeq: index === 3 ? 2 : 1,
            events: [{ type: "x.call", evidenceRefs: named.map(refOf) }],
            ...(blobs.length > 0 ? { blobs } : {}),
          });
        }),
      );
      // b0 starts alone; the others wait and go in balanced calls. Each call's keys are its
      // appends' keys in turn: 6, 3 per blob carried, 1 per blob named only, 1 for the puts.
      const batches = evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha);
      expect(batches.length).toBeGreaterThanOrEqual(1);
      const shapesSent: string[][] = [];
      for (const [, numKeys, keysAndArgs] of batches) {
        const args = (keysAndArgs as unknown as (string | number | Buffer)[]).slice(
          Number(numKeys),
        );
        const shapes: string[] = [];
        let expected = 0;
        for (let at = 1, call = 0; call < Number(args[0]); call++) {
          const count = Number(args[at]);
          const [carried, named] = [Number(args[at + 12]), Number(args[at + 13])];
          expected += 6 + 3 * carried + named + (carried > 0 ? 1 : 0);
          shapes.push(`${carried}/${named}`);
          at += count + 1;
        }
        expect(Number(numKeys)).toBe(expected);
        shapesSent.push(shapes);
      }
      // One call held appends with blobs (carried or named) and without.
      expect(
        shapesSent.some(
          (shapes) => shapes.includes("0/0") && shapes.some((shape) => shape !== "0/0"),
        ),
      ).toBe(true);
      for (const result of results) expect(result.deduplicated).toBe(false);
      // The refused first try of b3's append (a stale head) stored nothing; its second did.
      for (const [content, claimed] of [
        [shared, [0, 1]],
        [own0, [0]],
        [own3, [3]],
        [own4, [4]],
        [before, [4]],
      ] as const) {
        expect(new TextDecoder().decode(await own.getBlob(refOf(content)))).toBe(content);
        const members = await admin.smembers(blobKeys(prefix, refOf(content).slice(7)).sessions);
        expect(members.sort()).toEqual(
          claimed.map((index) => idField(sessions[index] as string)).sort(),
        );
      }
      expect(
        (await admin.smembers(sessionKeys(prefix, sessions[0] as string).puts)).sort(),
      ).toEqual([refOf(own0), refOf(shared)].sort());
      for (const index of [1, 2])
        expect(await admin.exists(sessionKeys(prefix, sessions[index] as string).puts)).toBe(0);
      for (const [index, sessionId] of sessions.entries()) {
        const stored = (await own.readSession({ sessionId })).events;
        expect(stored.map((event) => event.commitCursor)).toEqual(
          Array.from({ length: index === 3 ? 3 : 2 }, (_, at) => at + 1),
        );
        expect(stored[stored.length - 1]).toEqual(results[index]?.events[0]);
      }
    });
  });

  it("two stores writing runs of four sessions, every append carrying blobs others carry too: each written once, every blob kept", async () => {
    await watchedStores(async ({ own, other, evalsha }) => {
      await checkSharedBlobWriters([own, other], `shared-blobs-${randomBytes(4).toString("hex")}`);
      // Some script call held several appends, with the blobs they carry.
      const batches = evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha);
      expect(batches.some(([, numKeys]) => Number(numKeys) >= 2 * (6 + 4 * 3 + 1))).toBe(true);
    });
  });

  it("gathered appends whose blobs together pass 16 MiB go in script calls of their own", async () => {
    await watchedStores(async ({ own, evalsha }) => {
      const tag = randomBytes(4).toString("hex");
      const sessions = [0, 1, 2].map((index) => `large-${index}-${tag}`);
      for (const sessionId of sessions)
        await own.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
      // Random bytes as text: they do not deflate, so each blob stays about 9 MiB stored.
      const contents = sessions.map(() => randomBytes(9 * 1024 * 1024).toString("base64"));
      const refOf = (content: string) =>
        `sha256:${createHash("sha256").update(content).digest("hex")}`;
      evalsha.mockClear();
      // In one tick: the first starts alone, the two that wait would share a call.
      const results = await Promise.all(
        sessions.map((sessionId, index) =>
          own.append({
            sessionId,
            runId: "r",
            expectedSeq: 1,
            events: [{ type: "x.large", evidenceRefs: [refOf(contents[index] as string)] }],
            blobs: [contents[index] as string],
          }),
        ),
      );
      expect(evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha)).toEqual([]);
      expect(evalsha.mock.calls.filter(([sha]) => sha === APPEND_SCRIPT.sha)).toHaveLength(3);
      for (const [index, result] of results.entries()) {
        expect(result.deduplicated).toBe(false);
        const stored = await own.getBlob(refOf(contents[index] as string));
        expect(stored.byteLength).toBe((contents[index] as string).length);
      }
    });
  });

  it("a retry found written stores the blobs its first try left out (an earlier version put them apart)", async () => {
    // An earlier version put an append's blobs ahead of its script, and that put could fail
    // while the append landed. Such a state is made here by deleting the stored blob and claim.
    const sessionId = `repair-${randomBytes(4).toString("hex")}`;
    await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    const content = `a blob the first try did not store ${sessionId}`;
    const hex = createHash("sha256").update(content).digest("hex");
    const request: AppendRequest = {
      sessionId,
      runId: "r",
      expectedSeq: 1,
      events: [{ eventId: `named-${sessionId}`, type: "x.named", evidenceRefs: [`sha256:${hex}`] }],
      blobs: [content],
    };
    await store.append(request);
    const keys = blobKeys(prefix, hex);
    await admin.del(keys.content, keys.touched, keys.sessions);
    const retry = new RedisEventStore({ url, keyPrefix: prefix });
    try {
      expect((await retry.append(request)).deduplicated).toBe(true);
      expect(new TextDecoder().decode(await store.getBlob(`sha256:${hex}`))).toBe(content);
      expect(await admin.smembers(keys.sessions)).toEqual([idField(sessionId)]);
    } finally {
      await retry.close();
    }
  });

  it("an append whose blob key holds another type fails before any of its events is written", async () => {
    const sessionId = `wrongtype-${randomBytes(4).toString("hex")}`;
    await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    const content = `a blob whose session set was overwritten ${sessionId}`;
    const hex = createHash("sha256").update(content).digest("hex");
    const sessions = blobKeys(prefix, hex).sessions;
    await admin.set(sessions, "not a set");
    const append = () =>
      store.append({
        sessionId,
        runId: "r",
        expectedSeq: 1,
        events: [{ eventId: "named", type: "x.named", evidenceRefs: [`sha256:${hex}`] }],
        blobs: [content],
      });
    const error = await append().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "store-unavailable" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((await store.readRun({ sessionId, runId: "r" })).events).toHaveLength(1);
    expect(await admin.exists(blobKeys(prefix, hex).content)).toBe(0);
    await admin.del(sessions);
    expect((await append()).deduplicated).toBe(false);
    expect(new TextDecoder().decode(await store.getBlob(`sha256:${hex}`))).toBe(content);
  });

  it("a script call the server refuses fails only the append at fault; the others it held are written once", async () => {
    const client = new Redis(url);
    const own = new RedisEventStore({ client, keyPrefix: prefix });
    await own.init();
    const evalsha = vi.spyOn(client, "evalsha");
    try {
      for (const sessionId of ["refused-ok", "refused-bad"])
        await own.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
      // Someone else's value under the run's head key: every script that touches it fails
      // with WRONGTYPE, and a call that gathered other appends with it would fail them too.
      await client.set(runKeys(prefix, "refused-bad", "r").head, "not a hash");
      evalsha.mockClear();
      const [warm, ok, bad] = await Promise.allSettled(
        ["refused-warm", "refused-ok", "refused-bad"].map((sessionId) =>
          own.append({
            sessionId,
            runId: "r",
            expectedSeq: sessionId === "refused-warm" ? 0 : 1,
            events: [{ type: "input.received", payload: sessionId }],
          }),
        ),
      );
      // The warm-up started alone; ok and bad went together, ok first, so the refused call
      // had written ok's event when it failed on bad.
      expect(evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha)).toHaveLength(1);
      expect(warm?.status).toBe("fulfilled");
      expect(bad?.status).toBe("rejected");
      const failure = (bad as PromiseRejectedResult).reason;
      expect(failure).toMatchObject({ code: "store-unavailable" });
      expect(String((failure as Error & { cause: unknown }).cause)).toMatch(/WRONGTYPE/);
      expect(ok?.status).toBe("fulfilled");
      const written = (ok as PromiseFulfilledResult<{ events: { eventId: string }[] }>).value;
      const run = (await own.readRun({ sessionId: "refused-ok", runId: "r" })).events;
      expect(run.map((event) => event.eventId)).toEqual([
        run[0]?.eventId,
        written.events[0]?.eventId,
      ]);
      expect(run[1]).toEqual(written.events[0]);
    } finally {
      evalsha.mockRestore();
      await client.del(runKeys(prefix, "refused-bad", "r").head);
      await own.close();
      client.disconnect();
    }
  });

  it("pages runs, sessions and the session list", async () => {
    const sessionId = "pg";
    let seq = 0;
    for (const runId of ["r1", "r2"]) {
      for (let index = 0; index < 3; index++) {
        await store.append({
          sessionId,
          runId,
          expectedSeq: index,
          events: [{ type: index === 0 ? "run.started" : "input.received", payload: seq++ }],
        });
      }
    }
    const run = await store.readRun({ sessionId, runId: "r2", fromSeq: 1, limit: 1 });
    expect(run.events.map((event) => [event.seq, event.payload])).toEqual([[1, 4]]);
    expect(run.nextCursor).toBe(2);
    const pages: number[][] = [];
    let after = 0;
    for (;;) {
      const page = await store.readSession({ sessionId, after, limit: 4 });
      if (page.events.length === 0) break;
      pages.push(page.events.map((event) => event.commitCursor));
      after = page.nextCursor;
    }
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
    expect((await store.listRuns(sessionId)).map((summary) => summary.runId)).toEqual(["r1", "r2"]);
    const listPrefix = freshPrefix("list");
    extraPrefixes.push(listPrefix);
    const lister = new RedisEventStore({ url, keyPrefix: listPrefix });
    for (const id of ["c", "a", "b"]) {
      await lister.append({ sessionId: id, runId: "r", expectedSeq: 0, events: [started()] });
    }
    const first = await lister.listSessions({ limit: 2 });
    expect(first.sessions.map((session) => session.sessionId)).toEqual(["a", "b"]);
    expect(first.nextCursor).toBe("b");
    const second = await lister.listSessions({ after: "b", limit: 2 });
    expect(second.sessions.map((session) => session.sessionId)).toEqual(["c"]);
    expect(second.nextCursor).toBeUndefined();
    expect(second.sessions[0]).toMatchObject({ eventCount: 1 });
    // Code-point order, as the SQL stores list: "😀" (U+1F600) after "\uFFFD", where
    // JavaScript's UTF-16 units (D83D DE00) would put it before.
    const odd = ["b\uFFFD", "b😀", "b\uE000x", "b\u00e9"];
    for (const id of odd) {
      await lister.append({ sessionId: id, runId: "r", expectedSeq: 0, events: [started()] });
    }
    const listed = (await lister.listSessions({ after: "b" })).sessions.map((s) => s.sessionId);
    expect(listed).toEqual(["b\u00e9", "b\uE000x", "b\uFFFD", "b😀", "c"]);
    expect(
      (await lister.listSessions({ after: "b\uE000x", limit: 1 })).sessions.map((s) => s.sessionId),
    ).toEqual(["b\uFFFD"]);
    await lister.close();
  });

  it("lists no session the index names without events, and still fills a page", async () => {
    // An append's ZADD that lands after a deleteSession overtook it leaves such a member.
    const listPrefix = freshPrefix("stale");
    extraPrefixes.push(listPrefix);
    const lister = new RedisEventStore({ url, keyPrefix: listPrefix });
    for (const id of ["a", "c", "e"]) {
      await lister.append({ sessionId: id, runId: "r", expectedSeq: 0, events: [started()] });
    }
    for (const id of ["b", "d", "d2"])
      await admin.zadd(sessionsKey(listPrefix), 0, sessionMember(id));
    const first = await lister.listSessions({ limit: 2 });
    expect(first.sessions.map((session) => session.sessionId)).toEqual(["a", "c"]);
    expect(first.nextCursor).toBe("c");
    const second = await lister.listSessions({ after: "c", limit: 2 });
    expect(second.sessions.map((session) => session.sessionId)).toEqual(["e"]);
    expect(second.nextCursor).toBeUndefined();
    const all = await lister.listSessions();
    expect(all.sessions.map((session) => [session.sessionId, session.eventCount])).toEqual([
      ["a", 1],
      ["c", 1],
      ["e", 1],
    ]);
    // A page that ends on the last real session says no page follows.
    expect((await lister.listSessions({ after: "a", limit: 2 })).nextCursor).toBeUndefined();
    // Left in the index: removing it could race that session's next first append.
    expect(await admin.zcard(sessionsKey(listPrefix))).toBe(6);
    await lister.close();
  });

  it("a deletion that dies before its script leaves the session listed: prune still finds it", async () => {
    // A prune killed between taking the session out of the index and deleting its keys left a
    // session no listing found, whose keys nothing would ever delete.
    await watchedStores(async ({ own, evalsha }) => {
      const sessionId = `dies-${Date.now()}`;
      await own.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [started(), { type: "run.completed", payload: { output: null } }],
      });
      evalsha.mockImplementationOnce(() => Promise.reject(new Error("connection lost")));
      await expect(own.deleteSession(sessionId)).rejects.toMatchObject({
        code: "store-unavailable",
      });
      const listed = (await own.listSessions()).sessions.map((session) => session.sessionId);
      expect(listed).toContain(sessionId);
      // Run again, it deletes the session, which then leaves the index.
      await expect(own.deleteSession(sessionId)).resolves.toMatchObject({ deletedEvents: 2 });
      expect(await admin.zscore(sessionsKey(prefix), sessionMember(sessionId))).toBeNull();
    });
  });

  it("forks a prefix into a new run with new ids and a new chain", async () => {
    const sessionId = "fk";
    const source = await store.append({
      sessionId,
      runId: "main",
      expectedSeq: 0,
      events: [started(), { type: "input.received", payload: 1 }, { type: "run.completed" }],
    });
    const fork = await store.fork({ sessionId, runId: "main", newRunId: "copy", uptoSeq: 2 });
    expect(fork.events.map((event) => [event.runId, event.seq, event.payload])).toEqual([
      ["copy", 0, { goal: "test" }],
      ["copy", 1, 1],
    ]);
    expect(fork.events[0]?.eventId).not.toBe(source.events[0]?.eventId);
    expect(fork.events[1]?.prevHash).toBe(fork.events[0]?.hash);
    expect(fork.events.map((event) => event.commitCursor)).toEqual([4, 5]);
    expect((await store.readRun({ sessionId, runId: "copy" })).events).toEqual(fork.events);
    expect(await store.runHead({ sessionId, runId: "copy" })).toMatchObject({
      length: 2,
      status: "running",
    });
    await expect(
      store.fork({ sessionId, runId: "main", newRunId: "copy", uptoSeq: 1 }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 2 });
    await expect(
      store.fork({ sessionId, runId: "main", newRunId: "x", uptoSeq: 4 }),
    ).rejects.toMatchObject({ code: "not-found" });
    await expect(
      store.fork({ sessionId, runId: "nope", newRunId: "y", uptoSeq: 1 }),
    ).rejects.toMatchObject({ code: "not-found" });
  });

  it("stores blobs by sha256", async () => {
    const bytes = new Uint8Array([0, 255, 1, 254, 0]);
    const ref = await store.putBlob(bytes);
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await store.putBlob(bytes)).toBe(ref);
    expect(Array.from(await store.getBlob(ref))).toEqual([0, 255, 1, 254, 0]);
    const text = await store.putBlob("héllo \u0000");
    expect(new TextDecoder().decode(await store.getBlob(text))).toBe("héllo \u0000");
    await expect(store.getBlob(`sha256:${"0".repeat(64)}`)).rejects.toMatchObject({
      code: "not-found",
    });
    await expect(store.getBlob("sha256:nope")).rejects.toMatchObject({ code: "invalid-event" });
  });

  it("moves a layout-1 database's blobs to their one-slot keys on init, and refuses others", async () => {
    const legacy = freshPrefix("legacy");
    extraPrefixes.push(legacy);
    const writer = new RedisEventStore({ url, keyPrefix: legacy });
    await writer.init();
    const ref = await writer.putBlob("evidence kept across the upgrade");
    await writer.append({
      sessionId: "old",
      runId: "r",
      expectedSeq: 0,
      events: [{ ...started(), evidenceRefs: [ref] }],
    });
    await writer.close();
    // Rewrite the blob's keys as version 1 kept them: three keys in three slots.
    const hex = ref.slice(7);
    const base = `${legacy}blob:{${hex}}`;
    const content = (await admin.getBuffer(base)) as Buffer;
    const touched = (await admin.get(`${base}:touched`)) as string;
    const sessions = await admin.smembers(`${base}:sessions`);
    expect(sessions).toHaveLength(1);
    await admin.del(base, `${base}:touched`, `${base}:sessions`);
    await admin.set(`${legacy}blob:${hex}`, content);
    await admin.zadd(`${legacy}blob-touched`, touched, hex);
    await admin.sadd(`${legacy}blob-sessions:${hex}`, ...sessions);
    await admin.set(`${legacy}schema-version`, "1");

    // Two processes starting at once both move the keys; one starting later finds none left.
    const upgraded = new RedisEventStore({ url, keyPrefix: legacy });
    const sibling = new RedisEventStore({ url, keyPrefix: legacy });
    await Promise.all([upgraded.init(), sibling.init()]);
    await sibling.close();
    await upgraded.init();
    expect(await admin.get(`${legacy}schema-version`)).toBe("3");
    expect(new TextDecoder().decode(await upgraded.getBlob(ref))).toBe(
      "evidence kept across the upgrade",
    );
    const keys = await keysUnder(admin, legacy);
    expect(keys.filter((key) => key.includes(hex)).sort()).toEqual(
      [base, `${base}:sessions`, `${base}:touched`].sort(),
    );
    expect(keys).not.toContain(`${legacy}blob-touched`);
    expect(await admin.get(`${base}:touched`)).toBe(touched);
    expect(await admin.smembers(`${base}:sessions`)).toEqual(sessions);
    // The moved reference index and time still drive retention.
    await upgraded.append({
      sessionId: "old",
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "run.completed", payload: {} }],
    });
    expect(await upgraded.deleteSession("old", { blobGraceMs: 0 })).toMatchObject({
      deletedBlobs: 1,
      keptBlobs: 0,
    });
    expect(await keysUnder(admin, legacy)).toEqual([`${legacy}schema-version`]);
    await upgraded.close();

    await admin.set(`${legacy}schema-version`, "4");
    const newer = new RedisEventStore({ url, keyPrefix: legacy });
    await expect(newer.init()).rejects.toMatchObject({ code: "invalid-argument", path: "$" });
    await newer.close();
  });

  it("moves a layout-2 index of sessions (UTF-16 members) to code-point order on init", async () => {
    const legacy = freshPrefix("legacy-ids");
    extraPrefixes.push(legacy);
    // "中" is 4E 2D in UTF-16: the bytes of the UTF-8 id "N-", which must not appear.
    const ids = ["\u{1F600}", "\uFF61", "\u4E2D", "N-x", "a", "\u00e9"].map((id) => `${id}/s`);
    const writer = new RedisEventStore({ url, keyPrefix: legacy });
    await writer.init();
    for (const sessionId of ids)
      await writer.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    await writer.close();
    // Rewrite the index as layout 2 kept it: `sessions`, members in UTF-16 big-endian.
    const index = `${legacy}session-ids`;
    const members = await admin.zrangeBuffer(index, 0, -1);
    expect(members.map((member) => member.toString("utf8")).sort()).toEqual([...ids].sort());
    await admin.del(index);
    for (const member of members)
      await admin.zadd(
        `${legacy}sessions`,
        0,
        Buffer.from(member.toString("utf8"), "utf16le").swap16(),
      );
    await admin.set(`${legacy}schema-version`, "2");

    const upgraded = new RedisEventStore({ url, keyPrefix: legacy });
    const sibling = new RedisEventStore({ url, keyPrefix: legacy });
    await Promise.all([upgraded.init(), sibling.init()]);
    await sibling.close();
    expect(await admin.get(`${legacy}schema-version`)).toBe("3");
    expect(await admin.exists(`${legacy}sessions`)).toBe(0);
    const byBytes = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const listed = (await upgraded.listSessions()).sessions.map((session) => session.sessionId);
    expect(listed).toEqual(byBytes);
    expect(listed.indexOf("\uFF61/s")).toBeLessThan(listed.indexOf("\u{1F600}/s"));
    const paged = await upgraded.listSessions({ after: "\uFF61/s", limit: 5 });
    expect(paged.sessions.map((session) => session.sessionId)).toEqual(["\u{1F600}/s"]);
    // A new session joins the moved index, and a deleted one leaves it.
    await upgraded.append({ sessionId: "b", runId: "r", expectedSeq: 0, events: [started()] });
    await upgraded.append({
      sessionId: "a/s",
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "run.completed", payload: {} }],
    });
    await upgraded.deleteSession("a/s");
    expect((await upgraded.listSessions()).sessions.map((session) => session.sessionId)).toEqual(
      ["b", ...byBytes.filter((id) => id !== "a/s")].sort((a, b) =>
        Buffer.compare(Buffer.from(a), Buffer.from(b)),
      ),
    );
    await upgraded.close();
  });

  it("indexes the blob references of a layout-1 database written before the reference index", async () => {
    const legacy = freshPrefix("legacy0");
    extraPrefixes.push(legacy);
    const writer = new RedisEventStore({ url, keyPrefix: legacy });
    await writer.init();
    const content = Buffer.from("evidence named before blobs knew their sessions");
    const ref = await writer.putBlob(content);
    await writer.append({
      sessionId: "old",
      runId: "r",
      expectedSeq: 0,
      events: [
        { ...started(), evidenceRefs: [ref] },
        { type: "run.completed", payload: {} },
      ],
    });
    await writer.close();
    // As the release before blob retention kept a blob: raw bytes, no sessions, no time.
    const hex = ref.slice(7);
    const base = `${legacy}blob:{${hex}}`;
    await admin.del(base, `${base}:touched`, `${base}:sessions`);
    await admin.set(`${legacy}blob:${hex}`, content);
    await admin.set(`${legacy}schema-version`, "1");

    const upgraded = new RedisEventStore({ url, keyPrefix: legacy });
    await upgraded.init();
    await upgraded.append({
      sessionId: "new",
      runId: "r",
      expectedSeq: 0,
      events: [
        { ...started(), evidenceRefs: [ref] },
        { type: "run.completed", payload: {} },
      ],
    });
    expect(await upgraded.deleteSession("new", { blobGraceMs: 0 })).toMatchObject({
      deletedBlobs: 0,
      keptBlobs: 1,
    });
    expect(Buffer.from(await upgraded.getBlob(ref))).toEqual(content);
    // Once the old session goes too, nothing names the blob any more.
    expect(await upgraded.deleteSession("old", { blobGraceMs: 0 })).toMatchObject({
      deletedBlobs: 1,
    });
    expect(await keysUnder(admin, legacy)).toEqual([`${legacy}schema-version`]);
    await upgraded.close();
  });

  it("keeps hostile ids apart and out of key names", async () => {
    const hostile = ["}", "{", "a:b", "{x}", "s:{a}:log", "a}b{c", "x:run:y", "*?[]", "sessions"];
    for (const sessionId of hostile) {
      for (const runId of hostile.slice(0, 3)) {
        await store.append({
          sessionId,
          runId,
          expectedSeq: 0,
          events: [{ type: "run.started", payload: { sessionId, runId } }],
        });
      }
    }
    for (const sessionId of hostile) {
      const events = (await store.readSession({ sessionId })).events;
      expect(events.map((event) => [event.sessionId, event.runId, event.payload])).toEqual(
        hostile.slice(0, 3).map((runId) => [sessionId, runId, { sessionId, runId }]),
      );
      expect((await store.listRuns(sessionId)).map((run) => run.runId)).toEqual(
        hostile.slice(0, 3),
      );
    }
    const listed = (await store.listSessions()).sessions.map((session) => session.sessionId);
    for (const sessionId of hostile) expect(listed).toContain(sessionId);
    const layout = new RegExp(
      `^${prefix}(schema-version|session-ids|blob:\\{[0-9a-f]{64}\\}(:sessions|:touched)?|s:\\{[0-9a-f]{64}\\}:(meta|log|ids|runs|puts|run:[0-9a-f]{64}:(events|head)))$`,
    );
    // Lone surrogates have no UTF-8 form (they would collide with U+FFFD): refused up front.
    await expect(
      store.append({ sessionId: "s\uD800", runId: "r", expectedSeq: 0, events: [started()] }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.sessionId" });
    await expect(
      store.append({ sessionId: "s", runId: "r", expectedSeq: 0, events: [started("e\uDFFF")] }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.events[0].eventId" });
    expect((await store.readSession({ sessionId: "s\uFFFD" })).events).toEqual([]);
    const keys = await keysUnder(admin, prefix);
    expect(keys.length).toBeGreaterThan(hostile.length * 4);
    for (const key of keys) expect(key).toMatch(layout);
  });

  it("describes itself: redis, URL without password and with its key prefix, the server's persistence and eviction", async () => {
    const setting = async (name: string) =>
      ((await admin.config("GET", name)) as string[])[1] as string;
    expect(store.describe()).toEqual({
      kind: "redis",
      location: `${url}?keyPrefix=${prefix}`,
      durability: {
        appendonly: await setting("appendonly"),
        appendfsync: await setting("appendfsync"),
        maxmemory: await setting("maxmemory"),
        "maxmemory-policy": await setting("maxmemory-policy"),
      },
    });
    const secret = RedisEventStore.fromUrl("redis://user:s3cret@127.0.0.1:1/2");
    expect(secret.describe().location).not.toContain("s3cret");
    expect(secret.describe().location).toContain("127.0.0.1:1");
    await secret.close();
  });

  it("opens from openStore with the key prefix in the URL", async () => {
    const urlPrefix = freshPrefix("url");
    extraPrefixes.push(urlPrefix);
    const opened = await openStore(`${url}/0?keyPrefix=${encodeURIComponent(urlPrefix)}`);
    expect(opened).toBeInstanceOf(RedisEventStore);
    expect(Object.values(opened.describe().durability ?? {})).not.toContain("unknown");
    await opened.append({ sessionId: "o", runId: "r", expectedSeq: 0, events: [started()] });
    await opened.close();
    const keys = await keysUnder(admin, urlPrefix);
    expect(keys).toContain(`${urlPrefix}schema-version`);
    expect(keys.length).toBeGreaterThan(4);
  });

  it("uses a client the application made and leaves it open", async () => {
    const client = new Redis(url);
    const own = new RedisEventStore({ client, keyPrefix: prefix });
    await own.init();
    await own.append({ sessionId: "byo", runId: "r", expectedSeq: 0, events: [started()] });
    expect(own.describe().location).toBe(`redis://127.0.0.1:6379/0?keyPrefix=${prefix}`);
    await own.close();
    expect(await client.ping()).toBe("PONG");
    client.disconnect();
  });

  it("reports an unreachable server as store-unavailable with the driver error", async () => {
    const offline = new RedisEventStore({ url: "redis://127.0.0.1:1", keyPrefix: prefix });
    const error = await offline
      .append({ sessionId: "s", runId: "r", expectedSeq: 0, events: [started()] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "store-unavailable" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    await expect(offline.readSession({ sessionId: "s" })).rejects.toMatchObject({
      code: "store-unavailable",
    });
    await offline.close();
  });

  it("rejects a key prefix with braces and options without exactly one of client or url", () => {
    expect(() => new RedisEventStore({ url, keyPrefix: "a{b}" })).toThrow(/keyPrefix/);
    expect(() => new RedisEventStore({})).toThrow(/exactly one/);
    expect(() => new RedisEventStore({ url: "http://x" })).toThrow(/redis:\/\//);
  });

  it("writes one batch of 70,000 events whole (new run, cached run, retry, fork): the script's arguments no longer overflow the stack", async () => {
    // 70,000 events are some 140,000 script arguments; spread into one call they threw
    // RangeError (Maximum call stack size exceeded) and the append failed as store-unavailable.
    await checkLargeBatch(store, 70_000);
  }, 60_000);

  it("reads a page of a long run with one LRANGE of the session log per stretch, not a LINDEX per event", async () => {
    // A LINDEX per event walked the log from its nearer end each time: a page from the middle
    // of a 200,000-event run took ten times one from its start. MONITOR shows the script's calls.
    const sessionId = `pages-${randomBytes(4).toString("hex")}`;
    const events = (from: number, count: number): NewEvent[] =>
      Array.from({ length: count }, (_, index) => ({ type: "x.step", payload: from + index }));
    await store.append({ sessionId, runId: "r", expectedSeq: 0, events: events(0, 3000) });
    // Another run's events in between: the page spans two stretches of the log.
    await store.append({ sessionId, runId: "other", expectedSeq: 0, events: events(0, 20) });
    await store.append({ sessionId, runId: "r", expectedSeq: 3000, events: events(3000, 1000) });
    const monitor = await new Redis(url).monitor();
    const calls: string[] = [];
    let marked = false;
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.includes(`${prefix}marker`)) marked = true;
      else if (args.some((arg) => arg.startsWith(prefix) && arg.endsWith(":log")))
        calls.push(String(args[0]).toLowerCase());
    });
    try {
      // MONITOR output is asynchronous: a marker command after the page tells when its calls are in.
      const page = await store.readRun({ sessionId, runId: "r", fromSeq: 2000, limit: 2000 });
      await admin.get(`${prefix}marker`);
      await vi.waitFor(() => expect(marked).toBe(true));
      expect(page.events.map((event) => event.payload)).toEqual(
        Array.from({ length: 2000 }, (_, index) => 2000 + index),
      );
      expect(page.events.map((event) => event.seq)[1999]).toBe(3999);
      expect(calls.filter((call) => call === "lindex")).toEqual([]);
      expect(calls.filter((call) => call === "lrange")).toHaveLength(2);
    } finally {
      monitor.disconnect();
    }
  }, 60_000);
});

// SCRIPT FLUSH on a server of its own: on the shared one, the test files that run beside this
// one would count the NOSCRIPT answers it causes, or load the scripts again in between.
const noServer = await localClusterUnavailable();

describe.skipIf(noServer !== undefined)("RedisEventStore on a server that lost its scripts", () => {
  it("falls back to EVAL (NOSCRIPT) for an append, one carrying blobs, and a read", async () => {
    const server = await startLocalRedis([]);
    const admin = new Redis(server.url);
    const store = new RedisEventStore({ url: server.url, keyPrefix: "ledger:" });
    try {
      await store.init();
      await admin.script("FLUSH");
      expect(await admin.script("EXISTS", APPEND_SCRIPT.sha)).toEqual([0]);
      const result = await store.append({
        sessionId: "ns",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      expect(result.events[0]?.commitCursor).toBe(1);
      expect(await admin.script("EXISTS", APPEND_SCRIPT.sha)).toEqual([1]);
      await admin.script("FLUSH");
      const content = "a blob carried by the append that meets NOSCRIPT";
      const ref = `sha256:${createHash("sha256").update(content).digest("hex")}`;
      const carried = await store.append({
        sessionId: "ns",
        runId: "r",
        expectedSeq: 1,
        events: [{ type: "x.named", evidenceRefs: [ref] }],
        blobs: [content],
      });
      expect(carried.deduplicated).toBe(false);
      expect(new TextDecoder().decode(await store.getBlob(ref))).toBe(content);
      expect(await admin.smembers(blobKeys("ledger:", ref.slice(7)).sessions)).toEqual([
        idField("ns"),
      ]);
      await admin.script("FLUSH");
      expect((await store.readRun({ sessionId: "ns", runId: "r" })).events).toEqual([
        ...result.events,
        ...carried.events,
      ]);
    } finally {
      await store.close();
      admin.disconnect();
      await server.stop();
    }
  });
});
