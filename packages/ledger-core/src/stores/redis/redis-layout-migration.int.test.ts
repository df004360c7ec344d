import { describe, expect, it } from "vitest";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { started } from "./testing/started-event.js";
import { redisStoreFile } from "./testing/store-file.js";
import { freshPrefix, keysUnder } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const redis = redisStoreFile("store");

  it("moves a layout-1 database's blobs to their one-slot keys on init, and refuses others", async () => {
    const legacy = freshPrefix("legacy");
    redis.extraPrefixes.push(legacy);
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
    const content = (await redis.admin.getBuffer(base)) as Buffer;
    const touched = (await redis.admin.get(`${base}:touched`)) as string;
    const sessions = await redis.admin.smembers(`${base}:sessions`);
    expect(sessions).toHaveLength(1);
    await redis.admin.del(base, `${base}:touched`, `${base}:sessions`);
    await redis.admin.set(`${legacy}blob:${hex}`, content);
    await redis.admin.zadd(`${legacy}blob-touched`, touched, hex);
    await redis.admin.sadd(`${legacy}blob-sessions:${hex}`, ...sessions);
    await redis.admin.set(`${legacy}schema-version`, "1");

    // Two processes starting at once both move the keys; one starting later finds none left.
    const upgraded = new RedisEventStore({ url, keyPrefix: legacy });
    const sibling = new RedisEventStore({ url, keyPrefix: legacy });
    await Promise.all([upgraded.init(), sibling.init()]);
    await sibling.close();
    await upgraded.init();
    expect(await redis.admin.get(`${legacy}schema-version`)).toBe("3");
    expect(new TextDecoder().decode(await upgraded.getBlob(ref))).toBe(
      "evidence kept across the upgrade",
    );
    const keys = await keysUnder(redis.admin, legacy);
    expect(keys.filter((key) => key.includes(hex)).sort()).toEqual(
      [base, `${base}:sessions`, `${base}:touched`].sort(),
    );
    expect(keys).not.toContain(`${legacy}blob-touched`);
    expect(await redis.admin.get(`${base}:touched`)).toBe(touched);
    expect(await redis.admin.smembers(`${base}:sessions`)).toEqual(sessions);
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
    expect(await keysUnder(redis.admin, legacy)).toEqual([`${legacy}schema-version`]);
    await upgraded.close();

    await redis.admin.set(`${legacy}schema-version`, "4");
    const newer = new RedisEventStore({ url, keyPrefix: legacy });
    await expect(newer.init()).rejects.toMatchObject({ code: "invalid-argument", path: "$" });
    await newer.close();
  });

  it("moves a layout-2 index of sessions (UTF-16 members) to code-point order on init", async () => {
    const legacy = freshPrefix("legacy-ids");
    redis.extraPrefixes.push(legacy);
    // "中" is 4E 2D in UTF-16: the bytes of the UTF-8 id "N-", which must not appear.
    const ids = ["\u{1F600}", "\uFF61", "\u4E2D", "N-x", "a", "\u00e9"].map((id) => `${id}/s`);
    const writer = new RedisEventStore({ url, keyPrefix: legacy });
    await writer.init();
    for (const sessionId of ids)
      await writer.append({ sessionId, runId: "r", expectedSeq: 0, events: [started()] });
    await writer.close();
    // Rewrite the index as layout 2 kept it: `sessions`, members in UTF-16 big-endian.
    const index = `${legacy}session-ids`;
    const members = await redis.admin.zrangeBuffer(index, 0, -1);
    expect(members.map((member) => member.toString("utf8")).sort()).toEqual([...ids].sort());
    await redis.admin.del(index);
    for (const member of members)
      await redis.admin.zadd(
        `${legacy}sessions`,
        0,
        Buffer.from(member.toString("utf8"), "utf16le").swap16(),
      );
    await redis.admin.set(`${legacy}schema-version`, "2");

    const upgraded = new RedisEventStore({ url, keyPrefix: legacy });
    const sibling = new RedisEventStore({ url, keyPrefix: legacy });
    await Promise.all([upgraded.init(), sibling.init()]);
    await sibling.close();
    expect(await redis.admin.get(`${legacy}schema-version`)).toBe("3");
    expect(await redis.admin.exists(`${legacy}sessions`)).toBe(0);
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
    redis.extraPrefixes.push(legacy);
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
    await redis.admin.del(base, `${base}:touched`, `${base}:sessions`);
    await redis.admin.set(`${legacy}blob:${hex}`, content);
    await redis.admin.set(`${legacy}schema-version`, "1");

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
    expect(await keysUnder(redis.admin, legacy)).toEqual([`${legacy}schema-version`]);
    await upgraded.close();
  });
});
