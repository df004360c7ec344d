import { MAX_TIMER_MS, TIMEOUT_PARAM } from "../server-timeout.js";
import {
  assertKnownUrlParams,
  assertWholeNumberUrlParams,
  type WholeNumberParam,
} from "../url-params.js";

/**
 * Query parameters a postgres:// URL may carry: the store's (`schema`, `timeoutMs`), the ones
 * node-postgres' connection-string parser reads itself (`db`, `encoding`, `ssl`, the `ssl*`
 * files and mode), the connection settings node-postgres takes from it (ConnectionParameters),
 * and libpq's own (PostgreSQL's connection URIs: a provider's URL for psql, such as
 * `?sslmode=require&channel_binding=require`, opens as it is; node-postgres reads some).
 * Any other parameter node-postgres keeps as an option that nothing reads: a typo
 * (`?shema=agent_ledger`) would put the ledger's tables in `public`, where a reader given the
 * right URL does not look.
 */
const URL_PARAMS = [
  "schema",
  TIMEOUT_PARAM,
  "host",
  "port",
  "user",
  "password",
  "db",
  "encoding",
  "ssl",
  "sslmode",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "sslpassword",
  "sslnegotiation",
  "uselibpqcompat",
  "application_name",
  "fallback_application_name",
  "options",
  "client_encoding",
  "replication",
  "binary",
  "statement_timeout",
  "lock_timeout",
  "idle_in_transaction_session_timeout",
  "query_timeout",
  "connect_timeout",
  "keepalives",
  "keepalives_idle",
  // libpq's, which node-postgres does not read; not dbname nor service, which would name
  // another database than the one node-postgres connects to
  "hostaddr",
  "passfile",
  "channel_binding",
  "keepalives_interval",
  "keepalives_count",
  "tcp_user_timeout",
  "gssencmode",
  "requiressl",
  "sslcompression",
  "sslcertmode",
  "sslcrl",
  "sslcrldir",
  "sslsni",
  "requirepeer",
  "ssl_min_protocol_version",
  "ssl_max_protocol_version",
  "krbsrvname",
  "gsslib",
  "gssdelegation",
  "target_session_attrs",
  "load_balance_hosts",
];

/**
 * The bounds in a PostgreSQL URL that the store reads itself (bounded-pool.ts: a value that is
 * not a whole number was read as no bound at all, without a word, and connect_timeout's
 * seconds, as milliseconds, beyond Node's longest timer as 1 ms) and those node-postgres sends
 * to the server at connect, after its parseInt (the server then refused "NaN" or a negative
 * number at every connect, told as an outage, and took "10s" as 10 ms).
 */
const WHOLE_NUMBER_PARAMS: readonly WholeNumberParam[] = [
  {
    name: "connect_timeout",
    unit: "seconds",
    min: 0,
    max: Math.floor(MAX_TIMER_MS / 1000),
    use: "libpq's bound on connecting; 0 waits as long as the store's own bound",
    example: 10,
  },
  ...[
    "query_timeout",
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
  ].map((name) => ({
    name,
    unit: "milliseconds",
    min: 0,
    max: MAX_TIMER_MS,
    use:
      name === "query_timeout"
        ? "node-postgres' bound on each reply"
        : "node-postgres sends it to the server at connect as the session's setting; 0 sets none",
    example: 30_000,
  })),
];

/**
 * Refuses a query parameter of a PostgreSQL URL that neither the store nor node-postgres reads,
 * and a bound that is not a whole number in range (as `?timeoutMs=` is).
 */
export function assertKnownPostgresUrlParams(url: URL): void {
  assertKnownUrlParams(url, URL_PARAMS, "$.connectionString", "PostgreSQL");
  assertWholeNumberUrlParams(url, WHOLE_NUMBER_PARAMS, "$.connectionString", "PostgreSQL");
}
