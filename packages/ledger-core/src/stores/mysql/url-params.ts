import { MAX_TIMER_MS, TIMEOUT_PARAM } from "../server-timeout.js";
import {
  assertKnownUrlParams,
  assertWholeNumberUrlParams,
  type WholeNumberParam,
} from "../url-params.js";

/**
 * Query parameters a mysql:// URL may carry: the store's (`timeoutMs`), and the options mysql2
 * reads from a URL's query (ConnectionConfig.parseUrl takes every parameter as an option, its
 * value parsed as JSON where it parses: `?ssl={"rejectUnauthorized":true}` is an object), those
 * of its connections and of its pool. Not the ones parseUrl skips in the query, which the URL's
 * own parts give (`host`, `port`, `user`, `password`, `database`: `?database=` named another
 * database than the one the store used, and `?password=` was not sent, without a warning), nor
 * those that take a function or an object a URL cannot carry (`authPlugins`, `queryFormat`,
 * `stream`...). mysql2 keeps any other parameter as an option nothing reads, with a warning on
 * stderr: a typo (`?timeoutMS=`) left the store's default bound, and a TLS setting of another
 * client (Prisma's `?sslaccept=strict`, given with PlanetScale's URLs) connected without TLS.
 * `charset` and `supportBigNumbers` are read, but the store's own (utf8mb4, true) win;
 * `rowsAsArray`, `nestTables` and `typeCast` change how rows are read, and each of the store's
 * statements reads its own rows flat (own-query.ts); `resetOnRelease` is refused by the store,
 * saying why.
 */
export const MYSQL_URL_PARAMS: readonly string[] = [
  TIMEOUT_PARAM,
  "ssl",
  "connectTimeout",
  "socketPath",
  "localAddress",
  "charset",
  "timezone",
  "compress",
  "connectAttributes",
  "enableKeepAlive",
  "keepAliveInitialDelay",
  "flags",
  "insecureAuth",
  "enableCleartextPlugin",
  "password1",
  "password2",
  "password3",
  "passwordSha1",
  "maxPreparedStatements",
  "multipleStatements",
  "namedPlaceholders",
  "rowsAsArray",
  "nestTables",
  "typeCast",
  "dateStrings",
  "decimalNumbers",
  "bigNumberStrings",
  "supportBigNumbers",
  "jsonStrings",
  "stringifyObjects",
  "disableEval",
  "gracefulEnd",
  "debug",
  "trace",
  // the pool's
  "connectionLimit",
  "maxIdle",
  "idleTimeout",
  "queueLimit",
  "waitForConnections",
  "resetOnRelease",
];

/** The largest count the URL's counts take: a signed 32-bit integer. */
const MAX_COUNT = 2_147_483_647;

/** What mysql2 reads from the URL's own parts, and skips in its query. */
const URL_PARTS = ["host", "port", "user", "password", "database"];

/**
 * What to say of a parameter refused: one of the URL's own parts, or a TLS setting mysql2 does
 * not read (it would connect without TLS).
 */
function hint(name: string): string | undefined {
  if (URL_PARTS.includes(name))
    return `mysql2 ignores it in the query: the URL's own part gives the ${name} (mysql://user:password@host:port/database)`;
  if (!/ssl|tls/i.test(name)) return undefined;
  return "mysql2 ignores it and would connect without TLS; its TLS setting is ?ssl=, a JSON object of Node's TLS options (ssl={\"rejectUnauthorized\":true} verifies the server against Node's CAs) or the name of an SSL profile";
}

/**
 * mysql2's bounds in a URL, in milliseconds, and its pool's counts. `connectTimeout` that was not a number was
 * dropped for the store's bound without a word, and a negative one (a timer Node runs after
 * 1 ms) failed every connect as "no connection to the server within -5 ms", told as an outage;
 * `idleTimeout` that was not a number was the pool's default.
 */
const WHOLE_NUMBER_PARAMS: readonly WholeNumberParam[] = [
  {
    name: "connectTimeout",
    unit: "milliseconds",
    min: 0,
    max: MAX_TIMER_MS,
    use: "mysql2's bound on connecting, which wins over the store's",
    example: 10_000,
  },
  {
    name: "idleTimeout",
    unit: "milliseconds",
    min: 0,
    max: MAX_TIMER_MS,
    use: "how long the pool keeps a free connection",
    example: 60_000,
  },
  {
    name: "keepAliveInitialDelay",
    unit: "milliseconds",
    min: 0,
    max: MAX_TIMER_MS,
    use: "the idle time before a connection's first TCP keep-alive probe",
    example: 10_000,
  },
  // The pool's counts: one that was not a number was mysql2's default without a word, and a
  // connectionLimit of 0 or below a pool that never opens a connection (every statement waited).
  {
    name: "connectionLimit",
    unit: "connections",
    min: 1,
    max: MAX_COUNT,
    use: "the most connections the pool opens",
    example: 10,
  },
  {
    name: "maxIdle",
    unit: "connections",
    min: 0,
    max: MAX_COUNT,
    use: "the most free connections the pool keeps",
    example: 10,
  },
  {
    name: "queueLimit",
    unit: "waiting statements",
    min: 0,
    max: MAX_COUNT,
    use: "how many wait for a connection before one is refused, 0 for no limit",
    example: 0,
  },
  {
    name: "maxPreparedStatements",
    unit: "statements",
    min: 1,
    max: MAX_COUNT,
    use: "how many prepared statements each connection caches (0 was read as mysql2's 16000)",
    example: 16_000,
  },
];

/**
 * Refuses a query parameter of a MySQL URL that neither the store nor mysql2 reads, and a bound
 * that is not a whole number in range.
 */
export function assertKnownMysqlUrlParams(url: URL): void {
  assertKnownUrlParams(url, MYSQL_URL_PARAMS, "$.uri", "MySQL", hint);
  assertWholeNumberUrlParams(url, WHOLE_NUMBER_PARAMS, "$.uri", "MySQL");
}
