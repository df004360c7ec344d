import { createHash, randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { computeEventHash } from "../../events/hash-chain.js";
import type { AppendRequest } from "../../store/event-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedBlobWriters } from "../sql/testing/shared-blob-writers.js";
import { blobKeys, idField, runKeys, sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { APPEND_BATCH_SCRIPT, APPEND_SCRIPT } from "./scripts.js";
import { started } from "./testing/started-event.js";
import { redisStoreFile } from "./testing/store-file.js";
import { watchedStores } from "./testing/watched-stores.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const redis = redisStoreFile("store");

  it("gathers concurrent appends, of one session or several, into one script call, each answered as alone", async () => {
    await watchedStores(redis.prefix, async ({ own, other, evalsha }) => {
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
    await watchedStores(redis.prefix, async ({ own, other, evalsha }) => {
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
        const members = await redis.admin.smembers(
          blobKeys(redis.prefix, refOf(content).slice(7)).sessions,
        );
        expect(members.sort()).toEqual(
          claimed.map((index) => idField(sessions[index] as string)).sort(),
        );
      }
      expect(
        (await redis.admin.smembers(sessionKeys(redis.prefix, sessions[0] as string).puts)).sort(),
      ).toEqual([refOf(own0), refOf(shared)].sort());
      for (const index of [1, 2])
        expect(
          await redis.admin.exists(sessionKeys(redis.prefix, sessions[index] as string).puts),
        ).toBe(0);
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
    await watchedStores(redis.prefix, async ({ own, other, evalsha }) => {
      await checkSharedBlobWriters([own, other], `shared-blobs-${randomBytes(4).toString("hex")}`);
      // Some script call held several appends, with the blobs they carry.
      const batches = evalsha.mock.calls.filter(([sha]) => sha === APPEND_BATCH_SCRIPT.sha);
      expect(batches.some(([, numKeys]) => Number(numKeys) >= 2 * (6 + 4 * 3 + 1))).toBe(true);
    });
  });

  it("gathered appends whose blobs together pass 16 MiB go in script calls of their own", async () => {
    await watchedStores(redis.prefix, async ({ own, evalsha }) => {
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
    await redis.store.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    const content = `a blob the first try did not store ${sessionId}`;
    const hex = createHash("sha256").update(content).digest("hex");
    const request: AppendRequest = {
      sessionId,
      runId: "r",
      expectedSeq: 1,
      events: [{ eventId: `named-${sessionId}`, type: "x.named", evidenceRefs: [`sha256:${hex}`] }],
      blobs: [content],
    };
    await redis.store.append(request);
    const keys = blobKeys(redis.prefix, hex);
    await redis.admin.del(keys.content, keys.touched, keys.sessions);
    const retry = new RedisEventStore({ url, keyPrefix: redis.prefix });
    try {
      expect((await retry.append(request)).deduplicated).toBe(true);
      expect(new TextDecoder().decode(await redis.store.getBlob(`sha256:${hex}`))).toBe(content);
      expect(await redis.admin.smembers(keys.sessions)).toEqual([idField(sessionId)]);
    } finally {
      await retry.close();
    }
  });

  it("an append whose blob key holds another type fails before any of its events is written", async () => {
    const sessionId = `wrongtype-${randomBytes(4).toString("hex")}`;
    await redis.store.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    const content = `a blob whose session set was overwritten ${sessionId}`;
    const hex = createHash("sha256").update(content).digest("hex");
    const sessions = blobKeys(redis.prefix, hex).sessions;
    await redis.admin.set(sessions, "not a set");
    const append = () =>
      redis.store.append({
        sessionId,
        runId: "r",
        expectedSeq: 1,
        events: [{ eventId: "named", type: "x.named", evidenceRefs: [`sha256:${hex}`] }],
        blobs: [content],
      });
    const error = await append().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "store-unavailable" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((await redis.store.readRun({ sessionId, runId: "r" })).events).toHaveLength(1);
    expect(await redis.admin.exists(blobKeys(redis.prefix, hex).content)).toBe(0);
    await redis.admin.del(sessions);
    expect((await append()).deduplicated).toBe(false);
    expect(new TextDecoder().decode(await redis.store.getBlob(`sha256:${hex}`))).toBe(content);
  });

  it("a script call the server refuses fails only the append at fault; the others it held are written once", async () => {
    const client = new Redis(url);
    const own = new RedisEventStore({ client, keyPrefix: redis.prefix });
    await own.init();
    const evalsha = vi.spyOn(client, "evalsha");
    try {
      for (const sessionId of ["refused-ok", "refused-bad"])
        await own.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
      // Someone else's value under the run's head key: every script that touches it fails
      // with WRONGTYPE, and a call that gathered other appends with it would fail them too.
      await client.set(runKeys(redis.prefix, "refused-bad", "r").head, "not a hash");
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
      await client.del(runKeys(redis.prefix, "refused-bad", "r").head);
      await own.close();
      client.disconnect();
    }
  });
});
