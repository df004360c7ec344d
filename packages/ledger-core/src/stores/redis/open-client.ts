import type { Cluster, Redis } from "ioredis";
import type { KnownKeys } from "../../events/argument-checks.js";
import { InvalidArgumentError } from "../../events/errors.js";
import {
  assertParsableUrl,
  takeUrlParam,
  UNPARSABLE_URL,
  unusableUrl,
  withUrlParam,
} from "../../store/open-store.js";
import { redactUrl } from "../../store/redact-url.js";
import { storeTimeoutMs, takeTimeoutParam } from "../server-timeout.js";
import { assertStoreOptions } from "../store-options.js";
import {
  assertKnownRedisUrlParams,
  assertReadsFromMasters,
  clientKeyPrefix,
  createClient,
  DRIVER_TIMEOUT_PARAMS,
  type DriverTimeouts,
  describeClient,
  ownedClientOptions,
} from "./client.js";
import { assertDatabaseNumber } from "./database-number.js";
import type { RedisEventStoreOptions } from "./redis-store.js";

/** The client a store works on, and what its options say of it. */
export interface OpenedClient {
  client: Redis | Cluster;
  /** The store made the client from a URL, and quits it on close. */
  owned: boolean;
  prefix: string;
  /** What `describe()` reports: the URL (credentials redacted) with its `keyPrefix`. */
  location: string;
}

const REDIS_OPTIONS: KnownKeys<RedisEventStoreOptions> = {
  client: true,
  url: true,
  keyPrefix: true,
  timeoutMs: true,
};

/** The store's client and key prefix from its options, checked before anything connects. */
export function openClient(options: RedisEventStoreOptions): OpenedClient {
  assertStoreOptions(options, {
    store: "RedisEventStore",
    known: REDIS_OPTIONS,
    connection: ["client", "url"],
    example: '{ url: "redis://host:6379" }',
  });
  if ((options.client === undefined) === (options.url === undefined)) {
    throw new InvalidArgumentError("$", "RedisEventStore needs exactly one of client or url");
  }
  if (options.client !== undefined && options.timeoutMs !== undefined)
    throw new InvalidArgumentError(
      "$.timeoutMs",
      "timeoutMs bounds a client the store makes from a URL; give a client of your own its bounds: ioredis' socketTimeout and connectTimeout (with maxRetriesPerRequest: 0 and autoResendUnfulfilledCommands: false)",
    );
  let url = options.url;
  let location = url;
  let prefixFromUrl: string | undefined;
  let timeoutFromUrl: number | undefined;
  const driverTimeouts: DriverTimeouts = {};
  if (url !== undefined && /^rediss?:\/\//i.test(url)) {
    // `?keyPrefix=` in the URL (for openStore, which takes only a URL) is ours, not ioredis'
    // (whose own keyPrefix option would prefix every key a second time).
    const parsed = assertParsableUrl("$.url", url);
    // ioredis decodes the user name and password with decodeURIComponent: a stray "%" threw
    // its URIError from the constructor.
    for (const part of [parsed.username, parsed.password])
      try {
        decodeURIComponent(part);
      } catch {
        throw unusableUrl("$.url", url, `${UNPARSABLE_URL}: a "%" begins no escape`);
      }
    assertKnownRedisUrlParams(parsed);
    assertDatabaseNumber(parsed);
    prefixFromUrl = takeUrlParam(parsed, "keyPrefix");
    if (prefixFromUrl !== undefined) url = location = parsed.toString();
    // The bounds are read here, as numbers (ioredis would take them as strings, and ignore
    // them); the location keeps them.
    timeoutFromUrl = takeTimeoutParam(parsed, "$.url");
    // Checked by assertKnownRedisUrlParams.
    for (const name of DRIVER_TIMEOUT_PARAMS) {
      const value = takeUrlParam(parsed, name);
      if (value !== undefined) driverTimeouts[name] = Number(value);
    }
    if (timeoutFromUrl !== undefined || Object.keys(driverTimeouts).length > 0)
      url = parsed.toString();
  }
  const prefix = options.keyPrefix ?? prefixFromUrl ?? "agent-ledger:";
  if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
    // A brace in the prefix would become (part of) the Cluster hash tag of every key.
    throw new InvalidArgumentError("$.keyPrefix", "keyPrefix must be a string without { or }");
  }
  // An empty prefix put the ledger's keys (a bare `schema-version`) at the top of the database,
  // among an application's own; a client that prefixes every key itself keeps them under it.
  const ownPrefix = (options.client as { options?: { keyPrefix?: unknown } } | undefined)?.options
    ?.keyPrefix;
  if (prefix === "" && (typeof ownPrefix !== "string" || ownPrefix === ""))
    throw new InvalidArgumentError(
      options.keyPrefix === undefined ? "$.url" : "$.keyPrefix",
      "keyPrefix is empty: the ledger's keys would sit at the top of the database, among any others; give a prefix such as agent-ledger: (the default)",
    );
  if (url !== undefined) {
    if (!/^rediss?:\/\//i.test(url)) {
      throw new InvalidArgumentError("$.url", "a Redis URL starts with redis:// or rediss://");
    }
    const timeoutMs =
      storeTimeoutMs({ option: options.timeoutMs, fromUrl: timeoutFromUrl, owned: true }) ?? 0;
    return {
      client: createClient(url, ownedClientOptions(timeoutMs, driverTimeouts)),
      owned: true,
      prefix,
      location: withUrlParam(redactUrl(location ?? url), "keyPrefix", prefix),
    };
  }
  const client = options.client as Redis | Cluster;
  assertReadsFromMasters(client);
  // An application's client may prefix every key itself (ioredis' keyPrefix): the keys
  // are under both, and a URL that finds them names both as its keyPrefix.
  return {
    client,
    owned: false,
    prefix,
    location: withUrlParam(describeClient(client), "keyPrefix", clientKeyPrefix(client) + prefix),
  };
}
