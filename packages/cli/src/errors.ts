import { LedgerError, type LedgerErrorCode, serverRefusal } from "@agent-ledger/core";

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

/**
 * A store's message without the path it starts with (`$.url: `, `$.sessionId: `): the path of
 * the library's argument, which a person running the command never wrote. The command names what
 * the person gave instead (`--store`, the session's id).
 */
export function withoutPath(error: LedgerError): string {
  const prefix = `${error.path}: `;
  return error.path !== undefined && error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
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
