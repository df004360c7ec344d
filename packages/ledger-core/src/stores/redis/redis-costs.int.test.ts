import { createHash, randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { NewEvent } from "../../events/types.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { blobKeys, idField, sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

// What a call costs the server, counted (never timed): round trips the client waits for, and
// the commands the scripts run (MONITOR shows those).

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

/**
 * A client that counts its round trips: a command sent while none is awaiting its reply starts
 * one; commands sent before the replies come back share it.
 */
function countingClient(): { client: Redis; roundTrips(): number; sent: string[][] } {
  const client = new Redis(url);
  let inFlight = 0;
  let roundTrips = 0;
  const sent: string[][] = [];
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: Parameters<Redis["sendCommand"]>[0], stream?: never) => {
    sent.push([command.name, ...command.args.map(String)]);
    if (inFlight === 0) roundTrips++;
    inFlight++;
    const done = () => {
      inFlight--;
    };
    command.promise.then(done, done);
    return send(command, stream);
  }) as Redis["sendCommand"];
  return { client, roundTrips: () => roundTrips, sent };
}

describe.skipIf(!available)("RedisEventStore costs", () => {
  const prefix = freshPrefix("costs");
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await deleteKeys(url, prefix);
  });

  it("deleteSession collects the blobs of a session that names 300 in a few round trips, not one per blob", async () => {
    const { client, roundTrips } = countingClient();
    clients.push(client);
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    const sessionId = `blobs-${randomBytes(4).toString("hex")}`;
    const refs = await store.putBlobs?.(Array.from({ length: 300 }, (_, index) => `blob ${index}`));
    expect(refs).toHaveLength(300);
    const shared = (refs as string[])[0] as string;
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [
        { type: "run.started", evidenceRefs: refs as string[] },
        { type: "run.completed", payload: {} },
      ],
    });
    await store.append({
      sessionId: `keeper-${sessionId}`,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", evidenceRefs: [shared] }],
    });
    const before = roundTrips();
    const deleted = await store.deleteSession(sessionId, { blobGraceMs: 0 });
    const spent = roundTrips() - before;
    expect(deleted).toEqual({
      sessionId,
      deletedEvents: 2,
      deletedRuns: 1,
      deletedBlobs: 299,
      keptBlobs: 1,
    });
    expect(await store.getBlobs?.(refs as string[])).toEqual(
      new Map([[shared, new TextEncoder().encode("blob 0")]]),
    );
    expect(spent).toBeLessThan(15);
  });

  it("a put for a session and the append that names its blobs take one round trip each on one server, the index in the append's script", async () => {
    // A caller that puts its blobs, then names them. Each of the put's list, the blob's claim
    // and the append's index used to wait for its own reply.
    const { client, roundTrips, sent } = countingClient();
    clients.push(client);
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    const sessionId = `named-${randomBytes(4).toString("hex")}`;
    const call = async (turn: number) => {
      const refs = await store.putBlobs(
        [`message ${turn} ${sessionId}`, `system prompt ${sessionId}`],
        { sessionId },
      );
      const put = roundTrips();
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: turn,
        events: [{ type: "x.call", payload: { turn }, evidenceRefs: refs }],
      });
      return { refs, put };
    };
    await call(0); // loads the scripts (NOSCRIPT, then EVAL) and makes the session
    const before = roundTrips();
    sent.length = 0;
    const { refs, put } = await call(1);
    expect(put - before, "putBlobs").toBe(1);
    expect(roundTrips() - put, "append").toBe(1);
    // The put: the two blobs' scripts, each listing its blob for the session too; the append:
    // its script, which indexes.
    expect(sent.map(([name]) => name)).toEqual(["evalsha", "evalsha", "evalsha"]);
    for (const ref of refs)
      expect(await client.smembers(blobKeys(prefix, ref.slice(7)).sessions)).toEqual([
        idField(sessionId),
      ]);
  });

  it("an append that carries its blobs is one script call on one server, which stores them", async () => {
    // What the recorder does for a model call whose new messages go to the blob store.
    const { client, roundTrips, sent } = countingClient();
    clients.push(client);
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    const sessionId = `carried-${randomBytes(4).toString("hex")}`;
    const named = (await store.putBlobs([`put before ${sessionId}`]))[0] as string;
    const call = async (turn: number) => {
      const blobs = [`message ${turn} ${sessionId}`, `system prompt ${sessionId}`];
      const refs = blobs.map((text) => `sha256:${createHash("sha256").update(text).digest("hex")}`);
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: turn,
        // One blob named by the event and carried, one carried only, one named only.
        events: [{ type: "x.call", payload: { turn }, evidenceRefs: [refs[0] as string, named] }],
        blobs,
      });
      return refs;
    };
    await call(0); // loads the scripts and makes the session
    const before = roundTrips();
    sent.length = 0;
    const refs = await call(1);
    expect(roundTrips() - before, "append with its blobs").toBe(1);
    // One script: the events, the blobs carried (claimed, stored, stamped, listed in the
    // session's puts) and the index of the blob named only.
    expect(sent.map(([name]) => name)).toEqual(["evalsha"]);
    for (const ref of [...refs, named])
      expect(await client.smembers(blobKeys(prefix, ref.slice(7)).sessions)).toEqual([
        idField(sessionId),
      ]);
    expect(await client.smembers(sessionKeys(prefix, sessionId).puts)).toEqual(
      expect.arrayContaining(refs),
    );
    for (const ref of await call(2))
      expect(new TextDecoder().decode(await store.getBlob(ref))).toContain(sessionId);
    expect((await store.readRun({ sessionId, runId: "r" })).events).toHaveLength(3);
  });

  it("collectBlobs collects 1,200 blobs in a few round trips per batch besides its SCANs, not one per blob", async () => {
    const { client, roundTrips, sent } = countingClient();
    clients.push(client);
    // Under the file's prefix (cleaned up with it), apart from the other tests' blobs.
    const keyPrefix = `${prefix}collect:`;
    const store = new RedisEventStore({ client, keyPrefix });
    await store.init();
    const contents = (label: string) =>
      Array.from({ length: 600 }, (_, index) => `${label} ${index} ${keyPrefix}`);
    await store.putBlobs(contents("orphan"));
    // Claimed by a session that never appended: its existence is looked up, its claims removed.
    await store.putBlobs(contents("claimed"), { sessionId: "never-appended" });
    const before = roundTrips();
    sent.length = 0;
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 1200 });
    const scans = sent.filter(([name]) => name === "scan").length;
    // SCAN finds 1,800 keys to look at: 1,200 blobs and the 600 session sets of the claimed
    // ones (a set is looked at for itself, in case its blob is gone). So four batches (500,
    // 500, 500, 300) of at most four steps each: a look at the keys, the sessions' existence,
    // the deletions, the claims removed; and, if the server does not have the two scripts
    // yet, one EVAL round trip for each.
    expect(roundTrips() - before - scans).toBeLessThanOrEqual(4 * 4 + 2);
  });

  it("deleteSession reads a long session's log a page at a time, keeping only the refs", async () => {
    // One LRANGE 0 -1 brought the whole log back at once: a session of 200 MB of events was
    // 200 MB in one reply and in the process's memory, to find the few blobs it names.
    const { client, sent } = countingClient();
    clients.push(client);
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    const sessionId = `long-${randomBytes(4).toString("hex")}`;
    const ref = await store.putBlob("named late in the log");
    const events: NewEvent[] = Array.from({ length: 1200 }, (_, index) => ({
      type: "x.step",
      payload: index,
      ...(index === 1100 ? { evidenceRefs: [ref] } : {}),
    }));
    await store.append({ sessionId, runId: "r", expectedSeq: 0, events });
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 1200,
      events: [{ type: "run.completed", payload: {} }],
    });
    sent.length = 0;
    expect(await store.deleteSession(sessionId, { blobGraceMs: 0 })).toEqual({
      sessionId,
      deletedEvents: 1201,
      deletedRuns: 1,
      deletedBlobs: 1,
      keptBlobs: 0,
    });
    const logReads = sent.filter(
      ([name, key]) => name === "lrange" && key?.endsWith(":log") === true,
    );
    expect(logReads.length).toBeGreaterThan(1);
    for (const [, , start, stop] of logReads) {
      expect(Number(stop)).toBeGreaterThanOrEqual(Number(start));
      expect(Number(stop) - Number(start) + 1).toBeLessThanOrEqual(1000);
    }
  });

  it("a retried batch of 3,000 events is recognised with a few LRANGEs of the session log, not a LINDEX per event", async () => {
    const admin = new Redis(url);
    clients.push(admin);
    const store = new RedisEventStore({ url, keyPrefix: prefix });
    await store.init();
    const sessionId = `retry-${randomBytes(4).toString("hex")}`;
    const events = (from: number, count: number): NewEvent[] =>
      Array.from({ length: count }, (_, index) => ({
        eventId: `e${from + index}`,
        type: "x.step",
        payload: from + index,
      }));
    // Another run's events first: the batch sits deep in the log.
    await store.append({ sessionId, runId: "other", expectedSeq: 0, events: events(0, 2000) });
    const batch = { sessionId, runId: "r", expectedSeq: 0, events: events(2000, 3000) };
    const first = await store.append(batch);
    const monitor = await new Redis(url).monitor();
    clients.push(monitor);
    const calls: string[] = [];
    let marked = false;
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.includes(`${prefix}marker`)) marked = true;
      else if (args.some((arg) => arg.startsWith(prefix) && arg.endsWith(":log")))
        calls.push(String(args[0]).toLowerCase());
    });
    // Another store (another process): no cached head, so the retry goes to the script.
    const retrying = new RedisEventStore({ url, keyPrefix: prefix });
    await retrying.init();
    try {
      const retried = await retrying.append(batch);
      await admin.get(`${prefix}marker`);
      await vi.waitFor(() => expect(marked).toBe(true));
      expect(retried).toEqual({ events: first.events, deduplicated: true });
      expect(calls.filter((call) => call === "lindex")).toEqual([]);
      expect(calls.filter((call) => call === "lrange").length).toBeLessThan(5);
    } finally {
      await retrying.close();
      await store.close();
    }
  }, 60_000);
});
