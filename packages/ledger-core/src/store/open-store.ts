import { assertOneOf, assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError, LedgerError, StoreUnavailableError } from "../events/errors.js";
import type { EventStore } from "./event-store.js";
import { MemoryEventStore } from "./memory-store.js";
import { redactUrl, withoutSecrets } from "./redact-url.js";

export interface OpenStoreOptions {
  /** Run `init()` (create or upgrade the schema) before returning. Default true. */
  init?: boolean;
  /**
   * false: open only a ledger that is there (`init({ create: false })`): where there is none,
   * `not-found`, and no table or key is made. For tools that read. Default true.
   */
  create?: boolean;
  /**
   * false: never change the ledger's schema (`init({ upgrade: false })`): a ledger of an older
   * release is refused (`invalid-argument` at `$.upgrade`) and left as it was. For tools that
   * read a ledger agents of another release may still write. Default true.
   */
  upgrade?: boolean;
}

// Its options, checked against the interface by the compiler.
const OPEN_STORE_OPTIONS: KnownKeys<OpenStoreOptions> = {
  init: true,
  create: true,
  upgrade: true,
};

/**
 * Opens a store from a URL: `memory:`, `sqlite:./file.db` (or `sqlite::memory:`, `file:`),
 * `postgres://...` (or `postgresql://`), `mysql://...` (or `mariadb://`), `redis://...` (or
 * `rediss://`). The driver is loaded only when its scheme is
 * used, so `import "@agent-ledger/core"` loads none.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<EventStore> {
  if (typeof url !== "string" || url.length === 0)
    throw new InvalidArgumentError(
      "$.url",
      "a store URL is required, e.g. sqlite:./agent-ledger.db",
    );
  assertOptions(options, OPEN_STORE_OPTIONS, "openStore", {
    at: "$",
    needs: "openStore's options are { init?, create?, upgrade? }",
  });
  for (const name of ["init", "create", "upgrade"] as const)
    assertOneOf(options[name], `$.${name}`, [true, false]);
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase();
  let store: EventStore;
  try {
    store = await storeFor(scheme, url);
  } catch (error) {
    throw atUrl(error);
  }
  if (options.init ?? true) {
    try {
      await store.init({ create: options.create, upgrade: options.upgrade });
    } catch (error) {
      // The caller gets no store to close: a refused open leaves no pool or file open.
      await store.close().catch(() => undefined);
      throw atUrl(error);
    }
  }
  return store;
}

/** The options under which the store classes take a URL (SQLite's path is its URL's). */
const urlOptions = ["$.url", "$.uri", "$.connectionString", "$.path"];

/**
 * A store class's `invalid-argument` about its URL option (uri, connectionString, a SQLite
 * path: a folder that does not exist, a file that is not a database), from its
 * constructor or its init() (a database that holds another application's tables), told at
 * `$.url`: openStore's caller gave a URL, not those options. Any other error as it is.
 */
function atUrl(error: unknown): unknown {
  if (!LedgerError.isInstance(error, "invalid-argument") || !urlOptions.includes(error.path ?? ""))
    return error;
  return new InvalidArgumentError("$.url", error.message.slice(`${error.path}: `.length), {
    cause: error.cause,
    details: error.details,
  });
}

async function storeFor(scheme: string, url: string): Promise<EventStore> {
  let store: EventStore;
  switch (scheme) {
    case "memory:":
      // `memory:foo` read as a named store that a second open would find again; each open is
      // a new empty store of this process, so a name or path would be kept by nothing.
      if (url.length > scheme.length)
        throw new InvalidArgumentError(
          "$.url",
          `${JSON.stringify(redactUrl(url))}: memory: takes no name, path or options: each openStore("memory:") is a new empty store held in this process, shared with no other open and gone when it ends (sqlite:<path> keeps a ledger in a file)`,
        );
      store = new MemoryEventStore();
      break;
    case "sqlite:":
    case "file:": {
      const { SqliteEventStore } = await withDriver(
        "better-sqlite3",
        scheme,
        () => import("../stores/sqlite/index.js"),
      );
      store = SqliteEventStore.fromUrl(url);
      break;
    }
    case "postgres:":
    case "postgresql:": {
      const { PostgresEventStore } = await withDriver(
        "pg",
        scheme,
        () => import("../stores/postgres/index.js"),
      );
      store = PostgresEventStore.fromUrl(url);
      break;
    }
    case "mysql:":
    case "mariadb:": {
      const { MysqlEventStore } = await withDriver(
        "mysql2",
        scheme,
        () => import("../stores/mysql/index.js"),
      );
      store = MysqlEventStore.fromUrl(url);
      break;
    }
    case "redis:":
    case "rediss:": {
      const { RedisEventStore } = await withDriver(
        "ioredis",
        scheme,
        () => import("../stores/redis/index.js"),
      );
      store = RedisEventStore.fromUrl(url);
      break;
    }
    default:
      throw new InvalidArgumentError(
        "$.url",
        `unknown store URL ${JSON.stringify(redactUrl(url))}: use memory:, sqlite:<path> (or file:), postgres:// (or postgresql://), mysql:// (or mariadb://), or redis:// (rediss:// for TLS)`,
      );
  }
  return store;
}

/**
 * Loads a store module whose driver is an optional peer dependency. Without the driver, Node's
 * own "Cannot find package" error escaped from openStore: not a LedgerError, and silent on
 * what to do. It becomes `store-unavailable` naming the package to install (cause attached).
 */
async function withDriver<T>(driver: string, scheme: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      typeof message === "string" &&
      message.includes(`'${driver}'`)
    )
      throw new StoreUnavailableError(
        `${scheme} store URLs need the ${driver} package, an optional peer dependency of @agent-ledger/core: npm install ${driver}`,
        error,
      );
    throw error;
  }
}

/**
 * A setting of the store's own that its URL carries (Redis `keyPrefix`, PostgreSQL `schema`),
 * taken out of `url` (the driver would not know it) and returned; undefined, `url` untouched,
 * when absent. `withUrlParam` puts it back into the store's location.
 */
export function takeUrlParam(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name);
  if (value === null) return undefined;
  url.searchParams.delete(name);
  return value;
}

/**
 * A store's location with a setting of its own that its URL can carry (Redis `keyPrefix`,
 * PostgreSQL `schema`), which the store took out of the URL before handing it to the driver.
 * The value is escaped as a query needs, but ":" and "/" stay as written (a query may hold them
 * as they are): `keyPrefix=agent-ledger:`, not `keyPrefix=agent-ledger%3A`.
 */
export function withUrlParam(location: string, name: string, value: string): string {
  const separator = location.includes("?") ? "&" : "?";
  return `${location}${separator}${name}=${queryValue(value)}`;
}

/** `value` escaped for a URL's query, ":" and "/" kept (readable, and read back the same). */
function queryValue(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ":").replace(/%2F/gi, "/");
}

/**
 * A store URL its driver cannot use, refused before anything connects: `reason` says why, and
 * the URL is shown redacted. The parser's own error is not attached: it carries the whole URL,
 * password included (`input`), and would print it wherever the error is logged.
 */
export function unusableUrl(path: string, url: string, reason: string): InvalidArgumentError {
  return new InvalidArgumentError(
    path,
    `cannot use ${JSON.stringify(redactUrl(url))}: ${withoutSecrets(reason, url)}`,
  );
}

/**
 * Refuses a URL of one of `schemes` (`"postgres:"`) without the `//` of its host: pg and mysql2
 * read `postgres:/user:pw@host:1/db` as a path on their default host, so a typo reached
 * another server (localhost:5432) than the one the URL names.
 */
export function assertHostPart(path: string, url: string, schemes: readonly string[]): void {
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase();
  if (schemes.includes(scheme) && !url.startsWith("//", scheme.length))
    throw unusableUrl(
      path,
      url,
      `the URL starts with ${schemes.map((s) => `${s}//`).join(" or ")}`,
    );
}

/** Why a URL that does not parse is refused, and what usually fixes it. */
export const UNPARSABLE_URL =
  "it is not a valid URL (percent-encode @ : / % # ? and spaces in the user name and password)";

/** Refuses a URL that does not parse; reserved characters in credentials must be encoded. */
export function assertParsableUrl(path: string, url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw unusableUrl(path, url, UNPARSABLE_URL);
  }
}
