import { afterAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

const available = await serverAvailable("redis");
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(SERVER_URLS.redis, prefix);
});

describe.skipIf(!available)("RedisEventStore", () => {
  // Each case gets a fresh random key prefix (an empty store); nothing is skipped.
  runEventStoreConformance(
    () => {
      const prefix = freshPrefix("conf");
      prefixes.push(prefix);
      return new RedisEventStore({ url: SERVER_URLS.redis, keyPrefix: prefix });
    },
    { describe, it },
  );
});
