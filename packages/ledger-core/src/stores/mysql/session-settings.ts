import type mysql from "mysql2/promise";
import { InvalidArgumentError } from "../../events/errors.js";

/** What `init()` reads of the connection it migrates with, in one query. */
export const SESSION_SETTINGS_QUERY =
  "SELECT DATABASE() AS name, @@SESSION.sql_mode AS sqlMode, @@character_set_client AS client, @@character_set_connection AS connection, @@character_set_results AS results, @@autocommit AS autocommit";

/**
 * Run on each new connection of a pool the store makes (its sessions are the store's own):
 * adds STRICT_TRANS_TABLES to the server's sql_mode, so a server configured with a lenient
 * one (`sql_mode=''`, as older installs have) still refuses a value a column cannot hold.
 */
export const STRICT_SESSION =
  "SET SESSION sql_mode = IF(@@SESSION.sql_mode = '', 'STRICT_TRANS_TABLES', CONCAT(@@SESSION.sql_mode, ',STRICT_TRANS_TABLES'))";

export interface SessionSettings {
  name: string | null;
  sqlMode: string | null;
  client: string | null;
  connection: string | null;
  results: string | null;
  autocommit: number | string | null;
}

/**
 * Refuses the connection settings under which the store would misread or corrupt what it
 * writes, before it writes anything: with no database selected the shipped SQL has no tables
 * to name; under NO_BACKSLASH_ESCAPES the driver's escaping (a quote written `\'`) ends string
 * literals early, so a quote in an id or a payload breaks the statement or changes it; and a
 * character set other than utf8mb4, on either side of the wire, loses or garbles characters of
 * ids and bodies (a body that no longer parses, an id listed as another); with autocommit off,
 * the statements the store runs outside its own transactions (blob puts, the migrations'
 * version rows) would be acknowledged and never committed; without a strict sql_mode a value a
 * column cannot hold (text too long, a character its character set lacks) would be stored
 * changed, with a warning, and the append acknowledged. `path` names the option the
 * application sets them with. (The store's own pool is made strict by STRICT_SESSION.)
 */
export function checkSessionSettings(
  settings: SessionSettings | undefined,
  connection: mysql.PoolConnection,
  path: string,
): void {
  if (settings?.name == null)
    throw new InvalidArgumentError(
      "$.database",
      "no database selected: name one in the URL's path, the pool's database option, or the store's database option",
    );
  if (Number(settings.autocommit) !== 1)
    throw new InvalidArgumentError(
      path,
      "the connection has autocommit off, so the store's single statements (blob puts) would never commit: leave autocommit on for the store's connections",
    );
  const modes = (settings.sqlMode ?? "").toUpperCase().split(",");
  if (modes.includes("NO_BACKSLASH_ESCAPES"))
    throw new InvalidArgumentError(
      path,
      "the connection's sql_mode has NO_BACKSLASH_ESCAPES, under which the driver's escaped strings are misread: remove it from the sql_mode of the store's connections",
    );
  if (!modes.includes("STRICT_TRANS_TABLES") && !modes.includes("STRICT_ALL_TABLES"))
    throw new InvalidArgumentError(
      path,
      `the connection's sql_mode (${settings.sqlMode || "empty"}) is not strict, so a value a column cannot hold would be stored changed and acknowledged: add STRICT_TRANS_TABLES to the sql_mode of the store's connections`,
    );
  // The driver encodes what it sends with the charset it connected with (SET NAMES on the
  // server does not change that).
  const driver = (connection as unknown as { connection?: { clientEncoding?: string } }).connection
    ?.clientEncoding;
  const server = [settings.client, settings.connection, settings.results];
  if ((driver !== undefined && driver !== "utf8") || server.some((name) => name !== "utf8mb4"))
    throw new InvalidArgumentError(
      path,
      `the connection's character set must be utf8mb4 (charset option and character_set_client/connection/results; found ${server.join("/")}${driver === undefined ? "" : `, driver encoding ${driver}`})`,
    );
}
