import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { SERVER_URLS } from "../../../testing/servers.js";
import { RedisEventStore } from "../redis-store.js";
import { deleteKeys, freshPrefix } from "./test-keys.js";

/** What the tests of a file share: read inside tests, where `beforeAll` has set them. */
export interface RedisStoreFile {
  /** The file's own store, initialized, under `prefix`. */
  readonly store: RedisEventStore;
  /** A plain client for looking at keys or changing them behind the store. */
  readonly admin: Redis;
  readonly prefix: string;
  /** Prefixes of extra stores, deleted after the file even when a test failed. */
  readonly extraPrefixes: string[];
}

/**
 * One store under a fresh key prefix (`label` names it in the keys) and an admin client for
 * the tests of the enclosing `describe`: opened before them, closed after them, every key of
 * the prefix and of `extraPrefixes` deleted. Call it inside `describe.skipIf(!available)`, so
 * that the hooks are skipped with the tests when there is no server.
 */
export function redisStoreFile(label: string): RedisStoreFile {
  const url = SERVER_URLS.redis;
  const prefix = freshPrefix(label);
  const extraPrefixes: string[] = [];
  let store: RedisEventStore | undefined;
  let admin: Redis | undefined;

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

  return {
    get store() {
      return store as RedisEventStore;
    },
    get admin() {
      return admin as Redis;
    },
    prefix,
    extraPrefixes,
  };
}
