import type mysql from "mysql2/promise";
import { assertParsableUrl } from "../../store/open-store.js";
import { storeTimeoutMs, takeTimeoutParam } from "../server-timeout.js";
import { assertKnownMysqlUrlParams } from "./url-params.js";

/**
 * What the pool a store makes for `givenUri` is made with: the URI for mysql2 (`mariadb:` as
 * `mysql:`, without the store's `?timeoutMs=`, which mysql2 would warn of as an option it does
 * not know), the store's bound (the option, else the URI's, else the default), and mysql2's
 * `connectTimeout`: the URI's own if it has one (mysql2 would take an option given beside the
 * URI over it), else the bound.
 */
export function ownedPoolSettings(
  givenUri: string,
  timeoutOption: unknown,
): {
  uri: string;
  timeoutMs: number;
  connectTimeoutMs: number | undefined;
  connectTimeout: { connectTimeout?: number };
} {
  const asMysql = givenUri.replace(/^mariadb:/, "mysql:");
  const parsed = assertParsableUrl("$.uri", asMysql);
  assertKnownMysqlUrlParams(parsed);
  const fromUrl = takeTimeoutParam(parsed, "$.uri");
  const uri = fromUrl === undefined ? asMysql : parsed.toString();
  const timeoutMs = storeTimeoutMs({ option: timeoutOption, fromUrl, owned: true }) ?? 0;
  const own = Number(parsed.searchParams.get("connectTimeout") ?? Number.NaN);
  if (Number.isFinite(own)) return { uri, timeoutMs, connectTimeoutMs: own, connectTimeout: {} };
  if (timeoutMs === 0) return { uri, timeoutMs, connectTimeoutMs: undefined, connectTimeout: {} };
  return {
    uri,
    timeoutMs,
    connectTimeoutMs: timeoutMs,
    connectTimeout: { connectTimeout: timeoutMs },
  };
}

/** The settings a mysql2/promise pool makes its connections with (undefined for other pools). */
function connectionConfig(
  pool: mysql.Pool,
): { database?: unknown; clientFlags?: number; nestTables?: unknown } | undefined {
  return (pool as unknown as { pool?: { config?: { connectionConfig?: object } } }).pool?.config
    ?.connectionConfig;
}

/**
 * The database the pool's configuration (or URL) names, if any. The store names its tables
 * with it rather than leave them to each connection's current database: an application may
 * switch a pooled connection to another database (USE, changeUser), as multi-tenant
 * applications do, and the ledger's statements must not follow it there.
 */
export function configuredDatabase(pool: mysql.Pool): string | undefined {
  const config = connectionConfig(pool);
  return typeof config?.database === "string" && config.database.length > 0
    ? config.database
    : undefined;
}

/** mysql2's client capability flag for result sets from compound statements (on by default). */
const MULTI_RESULTS = 0x20000;

/** Whether the pool's connections take result sets from compound statements, as configured. */
export function multiResults(pool: mysql.Pool): boolean {
  const config = connectionConfig(pool);
  return config?.clientFlags === undefined || (config.clientFlags & MULTI_RESULTS) !== 0;
}

/**
 * Whether the pool's connections read rows nested by table (`nestTables`, true or a separator),
 * which mysql2 applies to every statement that does not say otherwise, drizzle's too.
 */
export function nestsTables(pool: mysql.Pool): boolean {
  const nestTables = connectionConfig(pool)?.nestTables;
  return nestTables !== undefined && nestTables !== false;
}
