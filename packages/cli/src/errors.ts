import { LedgerError, type LedgerErrorCode } from "@agent-ledger/core";

/** Exit codes of `agent-ledger` (documented in the README and `--help`). */
export const EXIT_CODES = {
  ok: 0,
  /** `verify` found a broken hash chain, or the command failed (see the message). */
  failure: 1,
  /** Bad usage: unknown command or option, bad store URL, refused bind. */
  usage: 2,
  /** The session, run, attempt or ledger file does not exist. */
  notFound: 3,
  /**
   * The store is unavailable (`store-unavailable`): its server cannot be reached or did not
   * answer in time, or the SQLite file could not be read or written (locked, full, I/O error).
   */
  unreachable: 4,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before it was done, as a shell reports SIGINT. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** An error the CLI reports to its user, with the exit code it ends with. */
export class CliError extends LedgerError {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  constructor(options: {
    code: LedgerErrorCode;
    message: string;
    exitCode: ExitCode;
    hint?: string;
    cause?: unknown;
  }) {
    super(
      options.code,
      options.message,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.name = "CliError";
    this.exitCode = options.exitCode;
    this.hint = options.hint;
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError({
    code: "invalid-argument",
    message,
    exitCode: EXIT_CODES.usage,
    ...(hint ? { hint } : {}),
  });
}

export function notFoundError(message: string, hint?: string): CliError {
  return new CliError({
    code: "not-found",
    message,
    exitCode: EXIT_CODES.notFound,
    ...(hint ? { hint } : {}),
  });
}

const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

function hasNetworkCode(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && networkCodes.has(code)) return true;
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some((inner) => hasNetworkCode(inner, depth + 1)))
    return true;
  return hasNetworkCode((error as { cause?: unknown }).cause, depth + 1);
}

/**
 * What a server that answered said no to, read from the driver error under a store's
 * `store-unavailable` (node-postgres SQLSTATE, mysql2's code, a Redis reply): the URL's database
 * does not exist, its user or password was refused, or its user may not do what was asked (an
 * upgrade's DDL by a user that may only read). `database-denied`: the user logged in and was
 * refused the URL's database, which MySQL and MariaDB answer a user without global privileges
 * for a database that does not exist too (a misspelt name). None is a server out of reach: no
 * retry later mends them. `no-tls`: the URL asks for TLS (`rediss://`, `?sslmode=require`,
 * `?ssl=`) of a server that takes none there.
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

export function serverRefusal(error: unknown, depth = 0): ServerRefusal | undefined {
  if (depth > 5 || typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  const byCode = typeof code === "string" ? refusalsByCode.get(code) : undefined;
  if (byCode !== undefined) return byCode;
  // ioredis: a ReplyError to AUTH (a wrong password, or none where one is required), or to
  // SELECT of a database number the server does not have.
  const message = (error as { message?: unknown }).message;
  // The URL asks for TLS where the server takes none: a Redis that answers plain text (core's
  // TLS handshake check), node-postgres' and mysql2's answers to ?sslmode= and ?ssl=.
  if ((error as { name?: unknown }).name === "TlsHandshakeError") return "no-tls";
  if (typeof message === "string") {
    if (
      /^(The server does not support SSL connections|Server does not support secure connection)/.test(
        message,
      )
    )
      return "no-tls";
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

/**
 * A store call the server refused the store URL's user in the middle of a command (`resolve` or
 * `delete` by a user that may only read, `verify` by a Redis user the ledger's read scripts are
 * not granted to), told as such with exit 1: the store's `store-unavailable` alone ended the
 * command with 4, which a script retries later, and waiting does not give the user the right.
 * Undefined for any other error.
 */
export function refusedMidCommand(error: unknown): CliError | undefined {
  if (error instanceof CliError || !LedgerError.isInstance(error, "store-unavailable"))
    return undefined;
  if (serverRefusal(error) !== "permission") return undefined;
  return new CliError({
    code: "invalid-argument",
    message: `the server refused the store URL's user: ${error.message}`,
    exitCode: EXIT_CODES.failure,
    hint: "check what the store URL's user may do: resolve, delete, prune and collect-blobs write to the ledger; on Redis, reading a run (verify, resolve) runs the ledger's script: a user that may read needs +@read, +@connection, +evalsha and +eval on the ledger's keys",
    cause: error,
  });
}

/** The exit code an error ends the CLI with. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (LedgerError.isInstance(error)) {
    switch (error.code) {
      case "invalid-argument":
        return EXIT_CODES.usage;
      case "not-found":
        return EXIT_CODES.notFound;
      case "store-unavailable":
        return EXIT_CODES.unreachable;
      default:
        return EXIT_CODES.failure;
    }
  }
  if (hasNetworkCode(error)) return EXIT_CODES.unreachable;
  return EXIT_CODES.failure;
}
