import type mysql from "mysql2/promise";

/** The settings a mysql2/promise pool makes its connections with (undefined for other pools). */
function connectionConfig(
  pool: mysql.Pool,
): { database?: unknown; clientFlags?: number } | undefined {
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
