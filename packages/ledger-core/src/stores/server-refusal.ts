import { InvalidArgumentError, LedgerError, NotFoundError } from "../events/errors.js";

/**
 * What a server that answered said no to, read from a driver error (node-postgres SQLSTATE,
 * mysql2's code, a Redis reply): the store's database does not exist (`no-database`), its user
 * logged in and was refused that database (`database-denied`, which MySQL and MariaDB also
 * answer a user without global privileges for a database that does not exist: a misspelt
 * name), its user or password was refused (`credentials`), TLS was asked of a server that takes
 * none there (`no-tls`), or its user may not do what was asked (`permission`: an upgrade's DDL
 * by a user that may only read). None is a server out of reach: no retry later mends it.
 */
export type ServerRefusal =
  | "no-database"
  | "database-denied"
  | "credentials"
  | "permission"
  | "no-tls";

const refusalsByCode: ReadonlyMap<string, ServerRefusal> = new Map([
  ["3D000", "no-database"], // PostgreSQL invalid_catalog_name
  ["28P01", "credentials"], // PostgreSQL invalid_password
  ["28000", "credentials"], // PostgreSQL invalid_authorization_specification (no such role)
  ["ER_BAD_DB_ERROR", "no-database"],
  ["ER_ACCESS_DENIED_ERROR", "credentials"],
  // MariaDB answers some refused logins so (seen for a user that does not exist, now and then).
  ["ER_ACCESS_DENIED_NO_PASSWORD_ERROR", "credentials"],
  ["ER_DBACCESS_DENIED_ERROR", "database-denied"],
  ["42501", "permission"], // PostgreSQL insufficient_privilege
  ["ER_TABLEACCESS_DENIED_ERROR", "permission"],
  ["ER_COLUMNACCESS_DENIED_ERROR", "permission"],
  ["ER_PROCACCESS_DENIED_ERROR", "permission"],
  ["ER_SPECIFIC_ACCESS_DENIED_ERROR", "permission"],
]);

/** The refusal in `error` or its causes (see ServerRefusal), undefined for any other error. */
export function serverRefusal(error: unknown, depth = 0): ServerRefusal | undefined {
  if (depth > 5 || typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  const byCode = typeof code === "string" ? refusalsByCode.get(code) : undefined;
  if (byCode !== undefined) return byCode;
  // The URL asks for TLS where the server takes none: a Redis that answers plain text (the
  // TLS handshake check), node-postgres' and mysql2's answers to ?sslmode= and ?ssl=.
  if ((error as { name?: unknown }).name === "TlsHandshakeError") return "no-tls";
  const message = (error as { message?: unknown }).message;
  if (typeof message === "string") {
    if (
      /^(The server does not support SSL connections|Server does not support secure connection)/.test(
        message,
      )
    )
      return "no-tls";
    // ioredis: a ReplyError to AUTH (a wrong password, or none where one is required), or to
    // SELECT of a database number the server does not have.
    if (/^(WRONGPASS|NOAUTH)\b/.test(message)) return "credentials";
    // An ACL user refused a command (a SET by a user that may only read).
    if (/^NOPERM\b/.test(message)) return "permission";
    // A command of the ledger's script it refused (an append by a user that may only read).
    if (message.startsWith("ERR The user executing the script can't run this command"))
      return "permission";
    if (message.startsWith("ERR DB index is out of range")) return "no-database";
  }
  return serverRefusal((error as { cause?: unknown }).cause, depth + 1);
}

/** The message of the innermost error that carries `refusal`'s driver answer. */
function refusalMessage(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    if (serverRefusal(current, 5) !== undefined && current instanceof Error) return current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * An init() failure that is the store's configuration, not an outage, as the error a caller
 * acts on: `store-unavailable` is what supervisors and scripts retry, and retrying a mistyped
 * database or a refused password never opens the store. A database that is not there (or not
 * the user's) is `not-found` under `create: false` ("no ledger at ..."; nothing was made), and
 * `invalid-argument` at `path` otherwise (a store makes tables, never the database). Refused
 * credentials and TLS the server does not take are `invalid-argument` at `path`, the option
 * that holds the URL or client. Each keeps the driver error as `cause` and the kind as
 * `details.refusal`. A `permission` refusal, and any other error, come back undefined: a user
 * that may only read is told so by the operation it was refused.
 */
export function refusedConfiguration(
  error: unknown,
  options: { location: string; path: string; create: boolean | undefined },
): LedgerError | undefined {
  // A refusal the store told already (not-found, invalid-argument) stays as it was.
  if (LedgerError.isInstance(error) && error.code !== "store-unavailable") return undefined;
  const refusal = serverRefusal(error);
  if (refusal === undefined || refusal === "permission") return undefined;
  const said = refusalMessage(error);
  const details = { refusal, location: options.location };
  if (refusal === "no-database" || refusal === "database-denied") {
    const what =
      refusal === "no-database"
        ? `the database is not there (${said})`
        : `the server refused its user the database (${said}); it answers so for a database that does not exist too`;
    if (options.create === false)
      return Object.assign(
        new NotFoundError(`no ledger at ${options.location}: ${what}`, details),
        {
          cause: error,
        },
      );
    return new InvalidArgumentError(
      options.path,
      `no database for the ledger at ${options.location}: ${what}. The store makes its tables, never the database: check its name, or create it`,
      { cause: error, details },
    );
  }
  const why =
    refusal === "credentials"
      ? `the server at ${options.location} refused the credentials (${said}): check the user and password`
      : `the server at ${options.location} takes no TLS there (${said}): drop the TLS setting (rediss://, ?sslmode=, ?ssl=) for a server without TLS, or give the host and port where it takes TLS`;
  return new InvalidArgumentError(options.path, why, { cause: error, details });
}
