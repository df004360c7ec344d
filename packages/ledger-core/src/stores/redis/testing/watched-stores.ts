import { Redis } from "ioredis";
import { type MockInstance, vi } from "vitest";
import { SERVER_URLS } from "../../../testing/servers.js";
import { RedisEventStore } from "../redis-store.js";

/**
 * `body` with a store on a client whose EVALSHA calls it watches, and another store on the
 * same prefix (another process); all closed after, whatever happened.
 */
export async function watchedStores(
  keyPrefix: string,
  body: (watched: {
    client: Redis;
    own: RedisEventStore;
    other: RedisEventStore;
    evalsha: MockInstance<Redis["evalsha"]>;
  }) => Promise<void>,
): Promise<void> {
  const url = SERVER_URLS.redis;
  const client = new Redis(url);
  const own = new RedisEventStore({ client, keyPrefix });
  const other = new RedisEventStore({ url, keyPrefix });
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
