import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../store/open-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { deleteKeys, freshPrefix, keysUnder } from "./testing/test-keys.js";

// Another application's key where the ledger keeps its key layout version: init() took its
// value for a layout and refused it as store-unavailable (retried for ever), or failed on its
// type. It is the key prefix to change, said so, and the key is left as it was.

const available = await serverAvailable("redis");
const admin = available ? new Redis(SERVER_URLS.redis) : undefined;
const prefixes: string[] = [];
afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(SERVER_URLS.redis, prefix);
  admin?.disconnect();
});

describe.skipIf(!available)(
  "RedisEventStore on a prefix where another application keeps a schema-version key",
  () => {
    for (const [kind, write] of [
      ["a string", (client: Redis, key: string) => client.set(key, "2024-05-01")],
      ["a hash", (client: Redis, key: string) => client.hset(key, "version", "7")],
    ] as const)
      it(`refuses ${kind} it did not write, naming the key, and writes nothing`, async () => {
        const prefix = freshPrefix("foreign");
        prefixes.push(prefix);
        const key = `${prefix}schema-version`;
        await write(admin as Redis, key);
        const url = `${SERVER_URLS.redis}?keyPrefix=${encodeURIComponent(prefix)}`;
        await expect(openStore(url)).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          message: expect.stringMatching(/schema-version.*a key prefix of its own/),
        });
        expect(await keysUnder(admin as Redis, prefix)).toEqual([key]);
      });
  },
);
