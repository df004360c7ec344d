import { InvalidArgumentError } from "../events/errors.js";
import type { EventStore } from "./event-store.js";
import { MemoryEventStore } from "./memory-store.js";

export interface OpenStoreOptions {
  /** Run `init()` (create or upgrade the schema) before returning. Default true. */
  init?: boolean;
}

/**
 * Opens a store from a URL: `memory:`, `sqlite:./file.db` (or `sqlite::memory:`),
 * `postgres://...`, `mysql://...`, `redis://...`. The driver is loaded only when its scheme is
 * used, so `import "@agent-ledger/core"` loads none.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<EventStore> {
  if (typeof url !== "string" || url.length === 0)
    throw new InvalidArgumentError(
      "$.url",
      "a store URL is required, e.g. sqlite:./agent-ledger.db",
    );
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase();
  let store: EventStore;
  switch (scheme) {
    case "memory:":
      store = new MemoryEventStore();
      break;
    case "sqlite:":
    case "file:": {
      const { SqliteEventStore } = await import("../stores/sqlite/index.js");
      store = SqliteEventStore.fromUrl(url);
      break;
    }
    case "postgres:":
    case "postgresql:": {
      const { PostgresEventStore } = await import("../stores/postgres/index.js");
      store = PostgresEventStore.fromUrl(url);
      break;
    }
    case "mysql:":
    case "mariadb:": {
      const { MysqlEventStore } = await import("../stores/mysql/index.js");
      store = MysqlEventStore.fromUrl(url);
      break;
    }
    case "redis:":
    case "rediss:": {
      const { RedisEventStore } = await import("../stores/redis/index.js");
      store = RedisEventStore.fromUrl(url);
      break;
    }
    default:
      throw new InvalidArgumentError(
        "$.url",
        `unknown store URL ${JSON.stringify(redactUrl(url))}: use memory:, sqlite:<path>, postgres://, mysql:// or redis://`,
      );
  }
  if (options.init ?? true) await store.init();
  return store;
}

/** A URL with its password replaced, for messages and `describe()`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@");
  }
}
