import { type Cluster, Redis, type RedisOptions } from "ioredis";
import { InvalidArgumentError, LedgerError, StoreUnavailableError } from "../../events/errors.js";
import { BROKEN_SOCKET_CODES } from "../read-retry.js";
import { MAX_TIMER_MS, TIMEOUT_PARAM } from "../server-timeout.js";
import { assertKnownUrlParams, assertWholeNumberUrlParams } from "../url-params.js";
import { withoutCredentials } from "./auth-reply.js";
import { quietReadyCheck } from "./server-ready.js";
import { failPlainServerHandshakes, PLAIN_SERVER_ERROR } from "./tls-handshake.js";

/**
 * Options for a client the store makes itself from a URL.
 *
 * `maxRetriesPerRequest: 0` makes ioredis reject every pending command as soon as the
 * connection drops (it flushes its queues on each close), and `autoResendUnfulfilledCommands:
 * false` stops it from re-sending a command that was already written to the old socket. An
 * EVALSHA in flight may or may not have run on the server; re-sending it blindly would turn a
 * lost reply into a second, different append (a new recordedAt, a conflict). The caller gets
 * `store-unavailable` instead and retries the same batch, which the append script recognises
 * (`deduplicated: true`) or writes once. The client still reconnects in the background, so the
 * next call works once the server is back. Commands issued while disconnected wait in the
 * offline queue (never sent, so safe) until the next connection attempt fails.
 */
export const OWNED_CLIENT_OPTIONS: RedisOptions = {
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  enableOfflineQueue: true,
};

/**
 * ioredis' own bounds, in ms, which a URL may carry too. ioredis would read them from a URL as
 * strings, and a string bounds nothing (it takes only numbers): the store reads them.
 */
export const DRIVER_TIMEOUT_PARAMS = ["connectTimeout", "commandTimeout", "socketTimeout"] as const;

export type DriverTimeouts = Partial<Record<(typeof DRIVER_TIMEOUT_PARAMS)[number], number>>;

/**
 * The options of a client the store makes, bounded by `timeoutMs` (none of the store's when
 * 0): to connect (`connectTimeout`), and for a reply on the socket (`socketTimeout`): a
 * connection that stopped answering is destroyed, its commands fail (as after a dropped
 * connection: see OWNED_CLIENT_OPTIONS) and the client makes a new one. Not `commandTimeout`:
 * it fails the command and keeps the connection, on which the caller's retry would be sent
 * and wait again. ioredis' own parameters in the URL (`driverTimeouts`) win over the bound.
 */
export function ownedClientOptions(
  timeoutMs: number,
  driverTimeouts: DriverTimeouts,
): RedisOptions {
  const bounded = timeoutMs === 0 ? {} : { connectTimeout: timeoutMs, socketTimeout: timeoutMs };
  return { ...OWNED_CLIENT_OPTIONS, ...bounded, ...driverTimeouts };
}

/**
 * Query parameters a store URL may carry: ours (`keyPrefix`, `timeoutMs`), ioredis' bounds
 * (DRIVER_TIMEOUT_PARAMS, which the store reads as numbers), and the ones ioredis reads
 * from a URL's query into its options that mean the same as a string (ioredis' parseURL takes
 * every parameter as an option: `family` it parses, `db` the constructor parses, the others it
 * uses as strings). Any other parameter would be an ioredis option with a string value, or a
 * typo (`?prefix=`) that ioredis ignores: the store would then write under the default prefix,
 * or run without the options that make a lost reply safe to retry (OWNED_CLIENT_OPTIONS, which
 * a URL parameter would override).
 */
const URL_PARAMS = [
  "keyPrefix",
  TIMEOUT_PARAM,
  ...DRIVER_TIMEOUT_PARAMS,
  "db",
  "family",
  "username",
  "password",
  "connectionName",
  "tls",
];

/**
 * Refuses a query parameter of a Redis URL the store or ioredis would not read as meant, and an
 * ioredis bound that is not a whole number of milliseconds from 1 up to Node's longest timer
 * (a longer one, which ioredis hands to a timer, ran out after 1 ms: every command failed as
 * "no reply from the server", an outage to wait out).
 */
export function assertKnownRedisUrlParams(url: URL): void {
  assertKnownUrlParams(url, URL_PARAMS, "$.url", "Redis");
  assertFamily(url);
  assertWholeNumberUrlParams(
    url,
    DRIVER_TIMEOUT_PARAMS.map((name) => ({
      name,
      unit: "milliseconds",
      min: 1,
      max: MAX_TIMER_MS,
      use: "ioredis' own bound, which wins over the store's",
      example: 10_000,
    })),
    "$.url",
    "Redis",
  );
}

/**
 * `?family=` as ioredis reads it (parseInt, else the string itself) goes to Node's connect,
 * which takes 0 (either), 4 or 6: `family=abc` or `family=5` failed every connect to a host
 * name (ERR_INVALID_ARG_VALUE), told as the server being unavailable, and `family=4x` was 4.
 */
function assertFamily(url: URL): void {
  const value = url.searchParams.get("family");
  if (value === null || value === "0" || value === "4" || value === "6") return;
  throw new InvalidArgumentError(
    "$.url",
    `family=${JSON.stringify(value)} in the Redis URL is not an IP family Node connects with: write ?family=4 (IPv4), ?family=6 (IPv6) or ?family=0 (either)`,
    { details: { param: "family", value } },
  );
}

/** The last connection error of each client the store made (ECONNREFUSED, a TLS failure...). */
const lastConnectionErrors = new WeakMap<object, Error>();
/** The clients the store made, whose connection errors it hears (lastConnectionErrors). */
const madeClients = new WeakSet<object>();

export function createClient(url: string, options: RedisOptions = OWNED_CLIENT_OPTIONS): Redis {
  const client = new Redis(url, options);
  quietReadyCheck(client);
  madeClients.add(client);
  // Errors reach callers as rejected commands; without a listener ioredis prints each one.
  // The last one is kept: a command rejected for want of a connection says only that. Not the
  // MaxRetriesPerRequestError ioredis also emits when it fails the queued commands: it would
  // hide the reason (a refused connection, a socket timeout).
  client.on("error", (error: Error) => {
    if (error.name !== "MaxRetriesPerRequestError")
      lastConnectionErrors.set(client, withoutCredentials(error));
  });
  client.on("ready", () => lastConnectionErrors.delete(client));
  if (client.options.tls) failPlainServerHandshakes(client);
  return client;
}

/**
 * Whether a call failed (`error`, the driver's or `unavailable`'s) because the connection it
 * was sent on closed under it: on a client the store made (createClient), a
 * MaxRetriesPerRequestError (see `unavailable`) with no connection error since the client was
 * last ready (the server closed it: CLIENT KILL, a restart, a failover), or only a reset one.
 * Not after a socket timeout (the store's bound), a refused or timed-out connection attempt, or
 * a server's refusal: each is a connection error of its own. On a client the application made
 * the store sees none of its connection errors (a listener would silence ioredis' own report
 * of them), so it cannot tell a drop from the application's socketTimeout: false, and the
 * client's own options (maxRetriesPerRequest, autoResendUnfulfilledCommands) decide.
 */
export function lostConnection(error: unknown, client: object): boolean {
  const cause = LedgerError.isInstance(error) ? error.cause : error;
  if (!(cause instanceof Error) || cause.name !== "MaxRetriesPerRequestError") return false;
  if (!madeClients.has(client)) return false;
  const last = lastConnectionErrors.get(client) as (Error & { code?: unknown }) | undefined;
  return last === undefined || BROKEN_SOCKET_CODES.has(last.code);
}

/** Calls that write: a lost reply leaves them applied or not, and the same call is safe again. */
const WRITES = new Set(["append", "fork", "putBlob", "deleteSession", "collectBlobs"]);

/**
 * Wraps a driver failure (a dropped connection, a refused command) as `store-unavailable`.
 * With maxRetriesPerRequest 0, ioredis rejects a command with MaxRetriesPerRequestError both
 * when the connection dropped while it was out and when it waited for a connection that could
 * not be made: the message says which could be the case for `what`, with the connection error
 * behind it when the store made the client.
 */
export function unavailable(error: unknown, what: string, client?: object): unknown {
  if (LedgerError.isInstance(error)) return error;
  let message = error instanceof Error ? error.message : String(error);
  const unknown = ` (the ${what} may or may not have been applied; retrying the same call is safe)`;
  const options = (client as { options?: Record<string, unknown> } | undefined)?.options;
  let cause: unknown = error;
  if (error instanceof Error && error.name === "MaxRetriesPerRequestError") {
    const lastError = client === undefined ? undefined : lastConnectionErrors.get(client);
    // The server answered the connection with a refusal (AUTH: WRONGPASS, NOAUTH; SELECT of a
    // database it lacks): that is why there is none, and what the caller tells apart.
    if (isReplyError(lastError)) cause = lastError;
    const bound = options?.socketTimeout;
    if (lastError?.name === PLAIN_SERVER_ERROR) {
      // rediss:// to a server without TLS (tls-handshake.ts): its message says so.
      cause = lastError;
      message = lastError.message;
    } else if (lastError?.message.startsWith("Socket timeout") && typeof bound === "number") {
      // socketTimeout: the server stopped answering, and the connection was destroyed.
      message = `no reply from the server within ${bound} ms: the connection was dropped${WRITES.has(what) ? unknown : ""}`;
    } else {
      message = WRITES.has(what)
        ? `the connection was lost before the reply arrived${unknown}`
        : "no connection to the server (lost, or it could not be made)";
      if (lastError !== undefined) message += `; last connection error: ${lastError.message}`;
    }
  } else if (error instanceof Error && error.message === "Command timed out") {
    // ioredis' commandTimeout: the command may still be in flight, or have run.
    const bound = options?.commandTimeout;
    message = `no reply from the server ${typeof bound === "number" ? `within ${bound} ms` : "in time"}`;
    if (WRITES.has(what)) message += unknown;
  }
  return new StoreUnavailableError(`redis ${what} failed: ${message}`, cause);
}

/** The server settings `describe().durability` reports (readDurability). */
const DURABILITY_SETTINGS = ["appendonly", "appendfsync", "maxmemory", "maxmemory-policy"];

/** Every durability setting as "unknown": what a store reports before `init()` read them. */
export function unknownDurability(): Record<string, string> {
  return Object.fromEntries(DURABILITY_SETTINGS.map((name) => [name, "unknown"]));
}

/**
 * The server's persistence and eviction settings; CONFIG is often renamed or disabled on
 * managed Redis ("unknown" then). One parameter per CONFIG GET: Redis before 7.0 takes one.
 */
export async function readDurability(client: Redis | Cluster): Promise<Record<string, string>> {
  const values = await Promise.all(
    DURABILITY_SETTINGS.map((name) =>
      (client.config("GET", name) as Promise<string[]>).then(
        (reply) => reply[1] ?? "unknown",
        (error: unknown) => {
          if (isReplyError(error)) return "unknown";
          throw error; // no answer at all: the server is unavailable, not discreet
        },
      ),
    ),
  );
  return Object.fromEntries(
    DURABILITY_SETTINGS.map((name, index) => [name, values[index] as string]),
  );
}

/**
 * Why the server, with these settings (readDurability), may delete the ledger's keys on its
 * own, or undefined. With a memory limit and an `allkeys-*` policy, Redis evicts any key when
 * the limit is reached: a session's log, its id index or a run's head could go while the rest
 * stays, which no reader or writer could tell from a shorter ledger, and later appends would
 * build on it. The ledger's keys have no TTL, so the `volatile-*` policies never pick them, and
 * `noeviction` refuses writes instead (the append fails as `store-unavailable`). A limit of 0
 * is no limit.
 */
export function evictsLedgerKeys(settings: Record<string, string>): string | undefined {
  const policy = settings["maxmemory-policy"] ?? "unknown";
  const limit = settings.maxmemory ?? "unknown";
  if (!policy.startsWith("allkeys-") || limit === "0") return undefined;
  return `this Redis server evicts any key when it reaches maxmemory (maxmemory ${limit}, maxmemory-policy ${policy}), the ledger's too, which would lose events without a trace: set maxmemory-policy to noeviction (or a volatile-* policy, which never picks the ledger's keys), or give the ledger a Redis of its own`;
}

/**
 * The oldest Redis major version the store runs on. The append script reads the server's clock
 * (TIME) and then writes, which a server replicates only by the script's effects: the default
 * from Redis 5.0 (older ones refuse the write); multi-field HSET needs 4.0.
 */
const MIN_REDIS_MAJOR = 5;

/** Why the server whose `INFO server` this is cannot run the store, or undefined if it can. */
export function serverTooOld(info: string): string | undefined {
  const version = /^redis_version:(\S+)/m.exec(info)?.[1];
  const major = Number(version?.split(".")[0]);
  if (version === undefined || !Number.isInteger(major) || major >= MIN_REDIS_MAJOR)
    return undefined;
  return `this Redis server is version ${version}; agent-ledger needs Redis ${MIN_REDIS_MAJOR}.0 or later (its append script writes after reading the server's clock, which older servers refuse)`;
}

/**
 * Refuses, at init, a server too old for the append script, rather than failing every append
 * with the server's own message. A server that refuses INFO is let through: its first append
 * says what is wrong. One that does not answer is unavailable (each later step would wait for
 * it again).
 */
export async function assertServerVersion(client: Redis | Cluster): Promise<void> {
  let info: string;
  try {
    info = await client.info("server");
  } catch (error) {
    if (isReplyError(error)) return;
    throw error;
  }
  const problem = serverTooOld(info);
  if (problem !== undefined) throw new StoreUnavailableError(problem);
}

/**
 * ioredis selects the database a URL or client names (`redis://host/3`) as it connects, and
 * when the server refuses (an index past its `databases` setting) it only emits an error and
 * goes on in database 0, where the ledger would be written among another application's keys.
 * Selecting it again makes that refusal an error of `init()`, before anything is written.
 */
export async function assertSelectedDatabase(client: Redis | Cluster): Promise<void> {
  if (isCluster(client)) return; // a Cluster has database 0 only
  const db = Number(client.options.db ?? 0);
  if (db === 0) return;
  try {
    await client.select(db);
  } catch (error) {
    if (!(error instanceof Error) || !/DB index/i.test(error.message)) throw error;
    throw new StoreUnavailableError(
      `the Redis server has no database ${db}, which the URL or client selects (${error.message})`,
      error,
    );
  }
}

/** An error the server answered with (a refused, renamed or unknown command), not a lost one. */
function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}

/** Whether the client is an ioredis Cluster: a script's keys must then share a slot. */
export function isCluster(client: Redis | Cluster): client is Cluster {
  return "isCluster" in client && client.isCluster;
}

/** Where a client the application made points, without credentials. */
export function describeClient(client: Redis | Cluster): string {
  if (isCluster(client)) return "redis-cluster";
  const options = (client as Redis).options;
  if (options.path) return `redis+unix://${options.path}`;
  const scheme = options.tls ? "rediss" : "redis";
  return `${scheme}://${options.host ?? "127.0.0.1"}:${options.port ?? 6379}/${options.db ?? 0}`;
}

/** The prefix ioredis puts before every key the client sends (its `keyPrefix`), or "". */
export function clientKeyPrefix(client: Redis | Cluster): string {
  const prefix = (client.options as { keyPrefix?: unknown }).keyPrefix;
  return typeof prefix === "string" ? prefix : "";
}

/**
 * Refuses a Cluster client that sends reads to replicas (`scaleReads` other than "master"):
 * a replica lags its master, so a read right after an acknowledged append (a run head, a
 * session's events, a resume after a crash) could miss it. The append scripts run on masters
 * either way; it is the reads that would be stale.
 */
export function assertReadsFromMasters(client: Redis | Cluster): void {
  if (!isCluster(client)) return;
  const scaleReads = client.options.scaleReads ?? "master";
  if (scaleReads !== "master")
    throw new InvalidArgumentError(
      "$.client",
      'a Cluster client with scaleReads other than "master" reads from replicas, which can miss an acknowledged append: give the store a Cluster client of its own with scaleReads "master"',
    );
}
