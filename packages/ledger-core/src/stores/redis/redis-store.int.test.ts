import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../events/types.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { blobKeys, idField } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { APPEND_SCRIPT } from "./scripts.js";
import { localClusterUnavailable, startLocalRedis } from "./testing/local-cluster.js";
import { started } from "./testing/started-event.js";
import { redisStoreFile } from "./testing/store-file.js";
import { freshPrefix, keysUnder } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const redis = redisStoreFile("store");

  it("two stores on one prefix (two processes) answer random sequences as the reference does, and racing writers through both lose nothing", async () => {
    // Each caches the run heads of its own appends: the other's writes must show.
    const shared = freshPrefix("two");
    redis.extraPrefixes.push(shared);
    const handles = [1, 2].map(() => new RedisEventStore({ url, keyPrefix: shared }));
    await checkSharedHandles(handles);
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
    const result = await redis.store.append({
      sessionId: "rt",
      runId: "r",
      expectedSeq: 0,
      events,
    });
    expect(result.deduplicated).toBe(false);
    expect(result.events.map((event) => event.commitCursor)).toEqual([1, 2]);
    expect(result.events[1]?.payload).toEqual(events[1]?.payload);
    expect(result.events[1]?.metadata).toEqual({ host: odd });
    const run = await redis.store.readRun({ sessionId: "rt", runId: "r" });
    expect(run.events).toEqual(result.events);
    const session = await redis.store.readSession({ sessionId: "rt" });
    expect(session.events).toEqual(result.events);
    expect(session.nextCursor).toBe(2);
    expect((run.events[1]?.payload as { big?: string } | undefined)?.big?.length).toBe(1024 * 1024);
    expect(await redis.store.runHead({ sessionId: "rt", runId: "r" })).toEqual({
      exists: true,
      length: 2,
      status: "running",
      lastHash: result.events[1]?.hash,
    });
  });

  it("rejects bad input before any I/O", async () => {
    const offline = new RedisEventStore({ url: "redis://127.0.0.1:1", keyPrefix: redis.prefix });
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
    await redis.store.append({ sessionId: "cf", runId: "r", expectedSeq: 0, events: [started()] });
    const error = await redis.store
      .append({ sessionId: "cf", runId: "r", expectedSeq: 0, events: [started()] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "conflict", actualSeq: 1, expectedSeq: 0 });
    await expect(
      redis.store.append({
        sessionId: "cf",
        runId: "r",
        expectedSeq: 5,
        events: [{ type: "model.requested" }],
      }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 1 });
    expect((await redis.store.readSession({ sessionId: "cf" })).events).toHaveLength(1);
  });

  it("deduplicates a retried batch, even on a closed run, and writes nothing twice", async () => {
    const batch: NewEvent[] = [started("d0"), { eventId: "d1", type: "run.completed" }];
    const first = await redis.store.append({
      sessionId: "dd",
      runId: "r",
      expectedSeq: 0,
      events: batch,
    });
    const again = await redis.store.append({
      sessionId: "dd",
      runId: "r",
      expectedSeq: 0,
      events: batch,
    });
    expect(again).toEqual({ events: first.events, deduplicated: true });
    // A second store (no cached head) sees the same.
    const other = new RedisEventStore({ url, keyPrefix: redis.prefix });
    expect(
      await other.append({ sessionId: "dd", runId: "r", expectedSeq: 2, events: batch }),
    ).toEqual({ events: first.events, deduplicated: true });
    await other.close();
    expect((await redis.store.readSession({ sessionId: "dd" })).events).toHaveLength(2);
  });

  // The connection can drop after the append script committed and before the session index
  // names the session: CLIENT KILL cannot hit that instant, so the client's ZADD fails once.
  it("lists a session whose first append lost its connection before listing it, when a retry finds the batch stored", async () => {
    const client = new Redis(url);
    const lossy = new RedisEventStore({ client, keyPrefix: redis.prefix });
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
      (await redis.store.listSessions({ limit: 1000 })).sessions.map(
        (session) => session.sessionId,
      );
    try {
      await expect(lossy.append(request)).rejects.toMatchObject({ code: "store-unavailable" });
      expect((await redis.store.readSession({ sessionId: "lost-listing" })).events).toHaveLength(2);
      expect(await sessions()).not.toContain("lost-listing");
      // The retry (here through a store with no cached head) finds the batch and lists it.
      const other = new RedisEventStore({ client, keyPrefix: redis.prefix });
      expect(await other.append(request)).toMatchObject({ deduplicated: true });
      expect(await sessions()).toContain("lost-listing");
      expect((await redis.store.readSession({ sessionId: "lost-listing" })).events).toHaveLength(2);
    } finally {
      client.disconnect();
    }
  });

  it("refuses an event id reused with other content, in another run, or in part", async () => {
    await redis.store.append({
      sessionId: "dup",
      runId: "r",
      expectedSeq: 0,
      events: [started("x")],
    });
    await expect(
      redis.store.append({
        sessionId: "dup",
        runId: "r",
        expectedSeq: 0,
        events: [{ ...started("x"), payload: { goal: "other" } }],
      }),
    ).rejects.toMatchObject({ code: "duplicate-event", path: "$.events[0].eventId" });
    await expect(
      redis.store.append({ sessionId: "dup", runId: "r2", expectedSeq: 0, events: [started("x")] }),
    ).rejects.toMatchObject({ code: "duplicate-event" });
    await expect(
      redis.store.append({
        sessionId: "dup",
        runId: "r",
        expectedSeq: 1,
        events: [{ eventId: "new", type: "input.received" }, started("x")],
      }),
    ).rejects.toMatchObject({ code: "duplicate-event", path: "$.events[1].eventId" });
    expect(await redis.store.listRuns("dup")).toHaveLength(1);
    expect((await redis.store.readSession({ sessionId: "dup" })).events).toHaveLength(1);
  });

  it("closes a run on a terminal event", async () => {
    await redis.store.append({
      sessionId: "cl",
      runId: "r",
      expectedSeq: 0,
      events: [started(), { type: "run.failed", payload: { reason: "x" } }],
    });
    await expect(
      redis.store.append({ sessionId: "cl", runId: "r", expectedSeq: 2, events: [started()] }),
    ).rejects.toMatchObject({ code: "run-closed" });
    await expect(
      redis.store.append({
        sessionId: "cl",
        runId: "r2",
        expectedSeq: 0,
        events: [started(), { type: "run.completed" }, { type: "input.received" }],
      }),
    ).rejects.toMatchObject({ code: "run-closed" });
    expect(await redis.store.runHead({ sessionId: "cl", runId: "r" })).toMatchObject({
      status: "failed",
      length: 2,
    });
    expect(await redis.store.runHead({ sessionId: "cl", runId: "r2" })).toMatchObject({
      exists: false,
    });
  });

  it("never trusts its cached head over the script's view of the run", async () => {
    const other = new RedisEventStore({ url, keyPrefix: redis.prefix });
    const a = await redis.store.append({
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
    const c = await redis.store.append({
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
      redis.store.append({ sessionId: "rp", runId: "r", expectedSeq: 3, events: [started()] }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 4 });
    expect((await redis.store.readRun({ sessionId: "rp", runId: "r" })).events).toHaveLength(4);
    await other.close();
  });

  it("keeps hostile ids apart and out of key names", async () => {
    const hostile = ["}", "{", "a:b", "{x}", "s:{a}:log", "a}b{c", "x:run:y", "*?[]", "sessions"];
    for (const sessionId of hostile) {
      for (const runId of hostile.slice(0, 3)) {
        await redis.store.append({
          sessionId,
          runId,
          expectedSeq: 0,
          events: [{ type: "run.started", payload: { sessionId, runId } }],
        });
      }
    }
    for (const sessionId of hostile) {
      const events = (await redis.store.readSession({ sessionId })).events;
      expect(events.map((event) => [event.sessionId, event.runId, event.payload])).toEqual(
        hostile.slice(0, 3).map((runId) => [sessionId, runId, { sessionId, runId }]),
      );
      expect((await redis.store.listRuns(sessionId)).map((run) => run.runId)).toEqual(
        hostile.slice(0, 3),
      );
    }
    const listed = (await redis.store.listSessions()).sessions.map((session) => session.sessionId);
    for (const sessionId of hostile) expect(listed).toContain(sessionId);
    const layout = new RegExp(
      `^${redis.prefix}(schema-version|session-ids|blob:\\{[0-9a-f]{64}\\}(:sessions|:touched)?|s:\\{[0-9a-f]{64}\\}:(meta|log|ids|runs|puts|run:[0-9a-f]{64}:(events|head)))$`,
    );
    // Lone surrogates have no UTF-8 form (they would collide with U+FFFD): refused up front.
    await expect(
      redis.store.append({ sessionId: "s\uD800", runId: "r", expectedSeq: 0, events: [started()] }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.sessionId" });
    await expect(
      redis.store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [started("e\uDFFF")],
      }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.events[0].eventId" });
    expect((await redis.store.readSession({ sessionId: "s\uFFFD" })).events).toEqual([]);
    const keys = await keysUnder(redis.admin, redis.prefix);
    expect(keys.length).toBeGreaterThan(hostile.length * 4);
    for (const key of keys) expect(key).toMatch(layout);
  });
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
