import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import type { NewEvent } from "../../events/types.js";
import { checkLargeBatch } from "../../testing/large-batch.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { sessionMember, sessionsKey } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { started } from "./testing/started-event.js";
import { redisStoreFile } from "./testing/store-file.js";
import { freshPrefix } from "./testing/test-keys.js";
import { watchedStores } from "./testing/watched-stores.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const redis = redisStoreFile("store");

  it("pages runs, sessions and the session list", async () => {
    const sessionId = "pg";
    let seq = 0;
    for (const runId of ["r1", "r2"]) {
      for (let index = 0; index < 3; index++) {
        await redis.store.append({
          sessionId,
          runId,
          expectedSeq: index,
          events: [{ type: index === 0 ? "run.started" : "input.received", payload: seq++ }],
        });
      }
    }
    const run = await redis.store.readRun({ sessionId, runId: "r2", fromSeq: 1, limit: 1 });
    expect(run.events.map((event) => [event.seq, event.payload])).toEqual([[1, 4]]);
    expect(run.nextCursor).toBe(2);
    const pages: number[][] = [];
    let after = 0;
    for (;;) {
      const page = await redis.store.readSession({ sessionId, after, limit: 4 });
      if (page.events.length === 0) break;
      pages.push(page.events.map((event) => event.commitCursor));
      after = page.nextCursor;
    }
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
    expect((await redis.store.listRuns(sessionId)).map((summary) => summary.runId)).toEqual([
      "r1",
      "r2",
    ]);
    const listPrefix = freshPrefix("list");
    redis.extraPrefixes.push(listPrefix);
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
    redis.extraPrefixes.push(listPrefix);
    const lister = new RedisEventStore({ url, keyPrefix: listPrefix });
    for (const id of ["a", "c", "e"]) {
      await lister.append({ sessionId: id, runId: "r", expectedSeq: 0, events: [started()] });
    }
    for (const id of ["b", "d", "d2"])
      await redis.admin.zadd(sessionsKey(listPrefix), 0, sessionMember(id));
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
    expect(await redis.admin.zcard(sessionsKey(listPrefix))).toBe(6);
    await lister.close();
  });

  it("a deletion that dies before its script leaves the session listed: prune still finds it", async () => {
    // A prune killed between taking the session out of the index and deleting its keys left a
    // session no listing found, whose keys nothing would ever delete.
    await watchedStores(redis.prefix, async ({ own, evalsha }) => {
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
      expect(
        await redis.admin.zscore(sessionsKey(redis.prefix), sessionMember(sessionId)),
      ).toBeNull();
    });
  });

  it("forks a prefix into a new run with new ids and a new chain", async () => {
    const sessionId = "fk";
    const source = await redis.store.append({
      sessionId,
      runId: "main",
      expectedSeq: 0,
      events: [started(), { type: "input.received", payload: 1 }, { type: "run.completed" }],
    });
    const fork = await redis.store.fork({ sessionId, runId: "main", newRunId: "copy", uptoSeq: 2 });
    expect(fork.events.map((event) => [event.runId, event.seq, event.payload])).toEqual([
      ["copy", 0, { goal: "test" }],
      ["copy", 1, 1],
    ]);
    expect(fork.events[0]?.eventId).not.toBe(source.events[0]?.eventId);
    expect(fork.events[1]?.prevHash).toBe(fork.events[0]?.hash);
    expect(fork.events.map((event) => event.commitCursor)).toEqual([4, 5]);
    expect((await redis.store.readRun({ sessionId, runId: "copy" })).events).toEqual(fork.events);
    expect(await redis.store.runHead({ sessionId, runId: "copy" })).toMatchObject({
      length: 2,
      status: "running",
    });
    await expect(
      redis.store.fork({ sessionId, runId: "main", newRunId: "copy", uptoSeq: 1 }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 2 });
    await expect(
      redis.store.fork({ sessionId, runId: "main", newRunId: "x", uptoSeq: 4 }),
    ).rejects.toMatchObject({ code: "not-found" });
    await expect(
      redis.store.fork({ sessionId, runId: "nope", newRunId: "y", uptoSeq: 1 }),
    ).rejects.toMatchObject({ code: "not-found" });
  });

  it("stores blobs by sha256", async () => {
    const bytes = new Uint8Array([0, 255, 1, 254, 0]);
    const ref = await redis.store.putBlob(bytes);
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await redis.store.putBlob(bytes)).toBe(ref);
    expect(Array.from(await redis.store.getBlob(ref))).toEqual([0, 255, 1, 254, 0]);
    const text = await redis.store.putBlob("héllo \u0000");
    expect(new TextDecoder().decode(await redis.store.getBlob(text))).toBe("héllo \u0000");
    await expect(redis.store.getBlob(`sha256:${"0".repeat(64)}`)).rejects.toMatchObject({
      code: "not-found",
    });
    await expect(redis.store.getBlob("sha256:nope")).rejects.toMatchObject({
      code: "invalid-event",
    });
  });

  it("writes one batch of 70,000 events whole (new run, cached run, retry, fork): the script's arguments no longer overflow the stack", async () => {
    // 70,000 events are some 140,000 script arguments; spread into one call they threw
    // RangeError (Maximum call stack size exceeded) and the append failed as store-unavailable.
    await checkLargeBatch(redis.store, 70_000);
  }, 60_000);

  it("reads a page of a long run with one LRANGE of the session log per stretch, not a LINDEX per event", async () => {
    // A LINDEX per event walked the log from its nearer end each time: a page from the middle
    // of a 200,000-event run took ten times one from its start. MONITOR shows the script's calls.
    const sessionId = `pages-${randomBytes(4).toString("hex")}`;
    const events = (from: number, count: number): NewEvent[] =>
      Array.from({ length: count }, (_, index) => ({ type: "x.step", payload: from + index }));
    await redis.store.append({ sessionId, runId: "r", expectedSeq: 0, events: events(0, 3000) });
    // Another run's events in between: the page spans two stretches of the log.
    await redis.store.append({ sessionId, runId: "other", expectedSeq: 0, events: events(0, 20) });
    await redis.store.append({
      sessionId,
      runId: "r",
      expectedSeq: 3000,
      events: events(3000, 1000),
    });
    const monitor = await new Redis(url).monitor();
    const calls: string[] = [];
    let marked = false;
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.includes(`${redis.prefix}marker`)) marked = true;
      else if (args.some((arg) => arg.startsWith(redis.prefix) && arg.endsWith(":log")))
        calls.push(String(args[0]).toLowerCase());
    });
    try {
      // MONITOR output is asynchronous: a marker command after the page tells when its calls are in.
      const page = await redis.store.readRun({ sessionId, runId: "r", fromSeq: 2000, limit: 2000 });
      await redis.admin.get(`${redis.prefix}marker`);
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
