import { isAbsolute, resolve } from "node:path";
import {
  type EventStore,
  LedgerError,
  openStore,
  redactUrl,
  type ServerRefusal,
  type SessionSummary,
  serverRefusal,
  stopBeforeNextPage,
} from "@agent-ledger/core";
import type { CommandContext } from "./commands/context.js";
import {
  CliError,
  EXIT_CODES,
  exitCodeOf,
  notFoundError,
  usageError,
  withoutPath,
} from "./errors.js";
import { hintCommand } from "./store-url.js";

/** The store URL when none is given. */
export const DEFAULT_STORE_URL = "sqlite:./agent-ledger.db";

const schemes = [
  "sqlite:",
  "file:",
  "postgres:",
  "postgresql:",
  "mysql:",
  "mariadb:",
  "redis:",
  "rediss:",
];

/** `--store`, else `AGENT_LEDGER_STORE`, else `sqlite:./agent-ledger.db`. */
export function resolveStoreUrl(options: {
  flag?: string | undefined;
  env: Record<string, string | undefined>;
}): string {
  const url = options.flag ?? options.env.AGENT_LEDGER_STORE ?? DEFAULT_STORE_URL;
  if (url.length === 0)
    throw usageError(
      `the store URL is empty (from ${storeOrigin(options.flag !== undefined ? "flag" : "env")})`,
      `use ${STORE_FORMS}`,
    );
  return url;
}

/** Options of `openCliStore`. */
export interface OpenCliStoreOptions {
  /** How long to wait for the store to open (default 10000 ms; not for `upgrade: true`). */
  timeoutMs?: number;
  /**
   * true: upgrade a ledger of an older release (`agent-ledger upgrade`). Default false: such a
   * ledger is refused (exit 1) and left as it was, for agents of that release may still write
   * to it.
   */
  upgrade?: boolean;
  /**
   * Where the URL came from, for the `agent-ledger upgrade` command a refusal prints: one from
   * `$AGENT_LEDGER_STORE` is left to the environment. Default "flag".
   */
  storeSource?: CommandContext["storeSource"];
}

/**
 * Opens the store for a command, turning failures into clear errors and exit codes: a bad
 * URL (or credentials the server refuses) exits 2, a missing SQLite file, a database without a
 * ledger or one that does not exist 3 (a command never makes one), a server that does not
 * answer within `timeoutMs` 4. A ledger of an older release exits 1 unless `upgrade`: no
 * command but `agent-ledger upgrade` changes a ledger's schema. So does a server that refuses
 * the user what opening needs (an upgrade by a user that may only read), and a ledger a newer
 * release upgraded (no command of this release opens it, and waiting does not change that).
 */
export async function openCliStore(
  url: string,
  options: OpenCliStoreOptions = {},
): Promise<EventStore> {
  const shown = redactUrl(url);
  const source = options.storeSource ?? "flag";
  const from = ` (from ${storeOrigin(source)})`;
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase();
  // The command's own memory store: always empty, it answered `no sessions` (exit 0).
  if (scheme === "memory:")
    throw usageError(
      `a memory: store is one per process${from}: this command's would be a new, empty one, never the agent's`,
      `use ${STORE_FORMS}`,
    );
  if (!schemes.includes(scheme))
    throw usageError(`bad store URL ${JSON.stringify(shown)}${from}`, `use ${STORE_FORMS}`);
  const sqlite = scheme === "sqlite:" || scheme === "file:";
  // A bad sqlite: or file: URL (no path, a host, an encoded "/"): openStore's invalid-argument,
  // exit 2 below. A missing file, one that is not SQLite, or another application's database:
  // its create: false answers not-found (exit 3) and leaves it as it was.
  if (!sqlite) {
    try {
      new URL(url);
    } catch (error) {
      throw new CliError({
        code: "invalid-argument",
        message: `bad store URL ${JSON.stringify(shown)}${from}: ${(error as Error).message}`,
        exitCode: EXIT_CODES.usage,
        cause: error,
      });
    }
  }
  const upgrade = options.upgrade === true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // An upgrade of a large ledger (a backfill) takes minutes: the store's own bounds apply,
    // which give a migration 10 minutes on top of its timeout. `upgrade` reached the store
    // within this bound first, when it found the ledger older.
    if (upgrade) return;
    timer = setTimeout(
      () =>
        reject(
          new CliError({
            code: "store-unavailable",
            message: `the store at ${shown} did not answer within ${timeoutMs} ms`,
            exitCode: EXIT_CODES.unreachable,
          }),
        ),
      timeoutMs,
    );
  });
  try {
    // No command makes a ledger: where there is none, not-found (exit 3).
    return await Promise.race([openStore(url, { create: false, upgrade }), timeout]);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = exitCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    if (isOlderLedger(error)) {
      const upgradeCommand = hintCommand(
        { storeUrl: url, storeSource: options.storeSource ?? "flag" },
        "upgrade",
      );
      throw new CliError({
        code: "invalid-argument",
        // The option a library caller set; here it is the command's.
        message: withoutPath(error),
        exitCode: EXIT_CODES.failure,
        hint: `run ${upgradeCommand} once no agent of an older release writes to this ledger`,
        cause: error,
      });
    }
    // Upgraded by a newer release: no wait, and no command of this release, opens it.
    if (isNewerLedger(error))
      throw new CliError({
        code: "invalid-argument",
        message: withoutPath(error),
        exitCode: EXIT_CODES.failure,
        hint: "run the agent-ledger of the release that upgraded it, or a later one (@agent-ledger/cli@latest)",
        cause: error,
      });
    // The server answered, and said no: not exit 4, which a script may retry later. The store
    // tells a refused database, credentials or TLS (details.refusal); the server's own words
    // follow the message, as they did under store-unavailable.
    const refusal = refusalOf(error);
    const said = refusal === "permission" ? message : serverWords(error);
    if (refusal === "permission")
      throw new CliError({
        code: "invalid-argument",
        message: `the server at ${shown} refused the store URL's user: ${message}`,
        exitCode: EXIT_CODES.failure,
        hint: upgrade
          ? "upgrading changes the ledger's tables (on Redis, its keys): run agent-ledger upgrade as a user that may"
          : "check what the store URL's user may read",
        cause: error,
      });
    if (refusal === "no-database")
      throw new CliError({
        code: "not-found",
        message: `no ledger at ${shown}: ${said}`,
        exitCode: EXIT_CODES.notFound,
        hint: "check the database name in the store URL",
        cause: error,
      });
    if (refusal === "database-denied")
      throw new CliError({
        code: "not-found",
        message: `no ledger at ${shown} for its user: ${said}`,
        exitCode: EXIT_CODES.notFound,
        hint: "check the database name in the store URL (the server refuses a user a database that does not exist as one it may not use), and that its user is granted that database",
        cause: error,
      });
    if (refusal === "no-tls")
      throw new CliError({
        code: "invalid-argument",
        message: `the server at ${shown} takes no TLS there: ${said}`,
        exitCode: EXIT_CODES.usage,
        hint: "the store URL asks for TLS (rediss://, ?sslmode=require, ?ssl=): drop it for a server without TLS, or give the host and port where the server takes TLS",
        cause: error,
      });
    if (refusal === "credentials")
      throw new CliError({
        code: "invalid-argument",
        message: `the server at ${shown} refused the store URL's credentials: ${said}`,
        exitCode: EXIT_CODES.usage,
        hint: "check the user and password in the store URL",
        cause: error,
      });
    if (code === EXIT_CODES.unreachable)
      throw new CliError({
        code: "store-unavailable",
        message: `cannot reach the store at ${shown}: ${message}`,
        exitCode: code,
        cause: error,
      });
    if (LedgerError.isInstance(error, "not-found"))
      throw notFoundError(
        `${sqlite ? absoluteLocation(error, message) : message}${from}`,
        `${storeHints[source]}${namesNoSchema(url) ? `; for a ledger kept in ${ANOTHER_SCHEMA}` : ""}`,
      );
    if (LedgerError.isInstance(error, "invalid-argument"))
      throw new CliError({
        code: "invalid-argument",
        // Without the library's path (`$.url: `): the person gave the URL as --store or the
        // variable, which `from` names.
        message: `bad store URL ${JSON.stringify(shown)}${from}: ${withoutPath(error)}`,
        exitCode: EXIT_CODES.usage,
        cause: error,
      });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What the server refused, if it answered and said no: the store's own word for a database,
 * credentials or TLS it refused (`details.refusal` of its not-found or invalid-argument), or a
 * refused privilege under its store-unavailable. Undefined for anything else.
 */
function refusalOf(error: unknown): ServerRefusal | undefined {
  if (!LedgerError.isInstance(error)) return undefined;
  const told = error.details.refusal;
  if (typeof told === "string" && error.code !== "store-unavailable") return told as ServerRefusal;
  return error.code === "store-unavailable" ? serverRefusal(error) : undefined;
}

/** The innermost cause's message: the server's (or driver's) own words for the refusal. */
function serverWords(error: unknown): string {
  let words = error instanceof Error ? error.message : String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    words = current.message;
    current = current.cause;
  }
  return words;
}

/** The stores a command can read: one that outlives the process. */
const STORE_FORMS = "sqlite:<path>, postgres://..., mysql://... or redis://...";

/** Where the store URL came from, as the errors about it say. */
function storeOrigin(source: CommandContext["storeSource"]): string {
  if (source === "flag") return "--store";
  if (source === "env") return "$AGENT_LEDGER_STORE";
  return `the default, ${DEFAULT_STORE_URL}`;
}

/** How to name a PostgreSQL ledger kept outside `public` (see `namesNoSchema`). */
const ANOTHER_SCHEMA = "another schema: add ?schema=<name> to the URL";

/**
 * A PostgreSQL URL that names no schema: its ledger is looked for in `public`, which the person
 * may not know, with the agent's ledger in a schema of its own.
 */
function namesNoSchema(url: string): boolean {
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase();
  return (
    (scheme === "postgres:" || scheme === "postgresql:") && !new URL(url).searchParams.has("schema")
  );
}

/** What to do about a store with no ledger, by where its URL came from. */
const storeHints: Record<CommandContext["storeSource"], string> = {
  flag: "check the URL given with --store",
  env: "check $AGENT_LEDGER_STORE, or pass --store <url>",
  default: "pass --store <url> or set AGENT_LEDGER_STORE",
};

/**
 * A SQLite store's "no ledger at <path>" with the path made absolute: a relative one is read
 * from the directory the command was run in, which `./agent-ledger.db` does not say.
 */
function absoluteLocation(error: LedgerError, message: string): string {
  const location = error.details?.location;
  if (typeof location !== "string" || isAbsolute(location)) return message;
  return message.replace(`no ledger at ${location}`, `no ledger at ${resolve(location)}`);
}

/**
 * The versions of a ledger `init({ upgrade: false })` refused as an older release's (`found`,
 * and the one this release `reads`), from core's error or the CliError made of it; else
 * undefined.
 */
export function olderLedgerVersions(error: unknown): { found: number; reads: number } | undefined {
  const refusal = error instanceof CliError ? error.cause : error;
  if (!isOlderLedger(refusal)) return undefined;
  const { found, reads } = refusal.details;
  return typeof found === "number" && typeof reads === "number" ? { found, reads } : undefined;
}

function isOlderLedger(error: unknown): error is LedgerError {
  return LedgerError.isInstance(error, "invalid-argument") && error.path === "$.upgrade";
}

/** core's refusal of a ledger a newer release upgraded (`newerLedgerError`). */
function isNewerLedger(error: unknown): error is LedgerError {
  return (
    LedgerError.isInstance(error, "invalid-argument") &&
    error.path === "$" &&
    typeof error.details?.found === "number"
  );
}

/** Whether the session holds an event: a session exists from its first, until deleted. */
export async function sessionHasEvents(store: EventStore, sessionId: string): Promise<boolean> {
  return (await store.readSession({ sessionId, limit: 1 })).events.length > 0;
}

/** Throws `not-found` (exit 3) unless the session has at least one event. */
export async function assertSessionExists(
  store: EventStore,
  sessionId: string,
  /** The command's store, for the hint's `sessions` command to name. */
  context?: Pick<CommandContext, "storeUrl" | "storeSource">,
): Promise<void> {
  if (!(await sessionHasEvents(store, sessionId)))
    throw notFoundError(
      `unknown session ${JSON.stringify(sessionId)}`,
      `list the sessions with: ${context === undefined ? "agent-ledger sessions" : hintCommand(context, "sessions")}`,
    );
}

/**
 * Throws `not-found` (exit 3) when session `sessionId`, there when `command` began, holds no
 * event once it has read it: deleted meanwhile (`prune` or `delete` in another process), so
 * what it read may stop part way (a deletion is one transaction, but a read of many pages is
 * not), with runs left open and calls in flight that were not.
 */
export async function assertNotDeletedWhileRead(
  store: EventStore,
  sessionId: string,
  command: string,
  consequence: string,
): Promise<void> {
  if (!(await sessionHasEvents(store, sessionId)))
    throw deletedWhileRead(sessionId, command, consequence);
}

/** The `not-found` error (exit 3) of a session deleted while `command` read it. */
export function deletedWhileRead(sessionId: string, command: string, consequence: string) {
  return notFoundError(
    `session ${JSON.stringify(sessionId)} was deleted while ${command} ran: ${consequence}`,
  );
}

/** Every session of the store, a `listSessions` page at a time, in id order. */
export async function* sessionPages(store: EventStore): AsyncGenerator<SessionSummary[]> {
  let after: string | undefined;
  for (;;) {
    const page = await store.listSessions({ ...(after ? { after } : {}), limit: 500 });
    if (page.sessions.length > 0) yield page.sessions;
    if (!page.nextCursor || page.sessions.length === 0) return;
    after = page.nextCursor;
  }
}

/**
 * `store` with its `readSession` answered by `read`, which is given the request and the store's
 * own `readSession`: every other method is the store's, called on the store.
 */
export function withReadSession(
  store: EventStore,
  read: (
    request: Parameters<EventStore["readSession"]>[0],
    readSession: EventStore["readSession"],
  ) => ReturnType<EventStore["readSession"]>,
): EventStore {
  const readSession: EventStore["readSession"] = (request) => store.readSession(request);
  return new Proxy(store, {
    get(target, property) {
      if (property === "readSession")
        return (request: Parameters<EventStore["readSession"]>[0]) => read(request, readSession);
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What the reads of `stoppingReads` throw once the command is stopped. */
export class ReadsStopped extends Error {
  constructor() {
    super("the command was stopped (Ctrl-C) while it read the session");
    this.name = "ReadsStopped";
  }
}

/**
 * `store` whose session reads stop at Ctrl-C or SIGTERM (`signal`): each page is read only if
 * the command was not stopped (`stopBeforeNextPage`: a turn of the event loop first, in which
 * the signal's handler runs even between SQLite's synchronous reads), else `ReadsStopped` is
 * thrown. For a command that reads a whole session through core (`inspectSession`, `toAtif`)
 * before it writes.
 */
export function stoppingReads(store: EventStore, signal: AbortSignal | undefined): EventStore {
  return withReadSession(store, async (request, readSession) => {
    if (await stopBeforeNextPage(signal)) throw new ReadsStopped();
    return readSession(request);
  });
}
