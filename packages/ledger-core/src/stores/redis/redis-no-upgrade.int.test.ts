import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  checkInitWithoutUpgrade,
  checkNewerLedgerRefused,
} from "../../testing/init-without-upgrade.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { deleteKeys, freshPrefix, keysUnder } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)(
  "RedisEventStore.init({ upgrade: false }) on an older key layout",
  () => {
    const prefixes: string[] = [];
    let admin: Redis;

    beforeAll(() => {
      admin = new Redis(url);
    });

    afterAll(async () => {
      admin?.disconnect();
      for (const prefix of prefixes) await deleteKeys(url, prefix);
    });

    /** Every key under the prefix with its type and serialized value. */
    async function snapshot(prefix: string): Promise<unknown> {
      const keys = await keysUnder(admin, prefix);
      return Promise.all(
        keys.map(async (key) => [key, await admin.type(key), await admin.dumpBuffer(key)]),
      );
    }

    /**
     * A ledger as layout `version` kept it: written by this release, then its session index (and,
     * for layout 1, a blob's keys) rewritten the way the older layout stored them.
     */
    async function olderLedger(version: 1 | 2): Promise<string> {
      const prefix = freshPrefix(`layout${version}`);
      prefixes.push(prefix);
      const writer = new RedisEventStore({ url, keyPrefix: prefix });
      await writer.init();
      const ref = await writer.putBlob("evidence an older release kept");
      await writer.append({
        sessionId: "old",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", payload: {}, evidenceRefs: [ref] }],
      });
      await writer.close();
      // Layout 2 and older: `sessions`, members in UTF-16 big-endian.
      const index = `${prefix}session-ids`;
      for (const member of await admin.zrangeBuffer(index, 0, -1))
        await admin.zadd(
          `${prefix}sessions`,
          0,
          Buffer.from(member.toString("utf8"), "utf16le").swap16(),
        );
      await admin.del(index);
      if (version === 1) {
        // Layout 1: a blob's three keys in three slots.
        const hex = ref.slice(7);
        const base = `${prefix}blob:{${hex}}`;
        const content = (await admin.getBuffer(base)) as Buffer;
        const touched = (await admin.get(`${base}:touched`)) as string;
        const sessions = await admin.smembers(`${base}:sessions`);
        await admin.del(base, `${base}:touched`, `${base}:sessions`);
        await admin.set(`${prefix}blob:${hex}`, content);
        await admin.zadd(`${prefix}blob-touched`, touched, hex);
        await admin.sadd(`${prefix}blob-sessions:${hex}`, ...sessions);
      }
      await admin.set(`${prefix}schema-version`, String(version));
      return prefix;
    }

    for (const version of [1, 2] as const)
      it(`refuses layout ${version} and moves no key; opens it once upgraded`, async () => {
        const prefix = await olderLedger(version);
        await checkInitWithoutUpgrade({
          open: () => new RedisEventStore({ url, keyPrefix: prefix }),
          snapshot: () => snapshot(prefix),
          found: version,
          reads: 3,
        });
      });

    it("refuses a layout a newer release wrote, with every init, and moves no key", async () => {
      const prefix = freshPrefix("layout4");
      prefixes.push(prefix);
      const writer = new RedisEventStore({ url, keyPrefix: prefix });
      await writer.init();
      await writer.append({
        sessionId: "new",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", payload: {} }],
      });
      await writer.close();
      await admin.set(`${prefix}schema-version`, "4");
      await checkNewerLedgerRefused({
        open: () => new RedisEventStore({ url, keyPrefix: prefix }),
        snapshot: () => snapshot(prefix),
        found: 4,
        reads: 3,
      });
    });
  },
);
