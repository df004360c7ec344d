import type { Attempt } from "../recorder/attempt.js";

/** Stable error codes. A code never changes meaning once released. */
export type LedgerErrorCode =
  | "conflict"
  | "duplicate-event"
  | "run-closed"
  | "non-serializable"
  | "invalid-event"
  | "not-found"
  | "store-unavailable"
  | "replay-divergence"
  | "unresolved-attempt"
  | "tamper-detected"
  | "invalid-argument";

const marker = Symbol.for("agent-ledger.error");

/** Options shared by every ledger error. */
export interface LedgerErrorOptions {
  /** JSON path of the offending value, e.g. `$.events[0].payload.messages[3].content`. */
  path?: string;
  /** The underlying error (a driver error, a validation failure). */
  cause?: unknown;
  /** Extra machine-readable facts about the failure. */
  details?: Record<string, unknown>;
}

/**
 * Every error the ledger raises. Check with `LedgerError.isInstance(error, code?)` rather than
 * `instanceof`, so the check works across duplicated copies of the package.
 */
export class LedgerError extends Error {
  readonly [marker] = true;
  readonly code: LedgerErrorCode;
  readonly path: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: LedgerErrorCode, message: string, options: LedgerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LedgerError";
    this.code = code;
    this.path = options.path;
    this.details = options.details ?? {};
  }

  /**
   * True for any ledger error (optionally of one code), from any copy of this package. With a
   * code whose errors carry facts of their own (`conflict`: `actualSeq`; `unresolved-attempt`:
   * `attempt`; `duplicate-event`: `eventId`), the error is typed as that class.
   */
  static isInstance<C extends LedgerErrorCode>(
    error: unknown,
    code: C,
  ): error is C extends keyof LedgerErrorsWithFacts ? LedgerErrorsWithFacts[C] : LedgerError;
  static isInstance(error: unknown, code?: LedgerErrorCode): error is LedgerError;
  static isInstance(error: unknown, code?: LedgerErrorCode): error is LedgerError {
    if (typeof error !== "object" || error === null || !(marker in error)) return false;
    return code === undefined || (error as LedgerError).code === code;
  }
}

/**
 * The codes whose every error is raised as the class named here, with its own facts (a code's
 * other errors are plain LedgerErrors: a blob that fails its hash is `tamper-detected` with no
 * `badSeq`).
 */
interface LedgerErrorsWithFacts {
  conflict: ConflictError;
  "duplicate-event": DuplicateEventError;
  "unresolved-attempt": UnresolvedAttemptError;
}

/**
 * The LedgerError inside an error a framework threw around it (optionally of one code), or
 * undefined. Frameworks wrap: in `cause` (LangChain's MiddlewareError), in `errors` (an
 * AggregateError of parallel tasks), in `error` (OpenAI Agents' ToolCallError).
 */
export function findLedgerError(error: unknown, code?: LedgerErrorCode): LedgerError | undefined {
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (LedgerError.isInstance(current, code)) return current;
    const {
      cause,
      errors,
      error: wrapped,
    } = current as {
      cause?: unknown;
      errors?: unknown;
      error?: unknown;
    };
    queue.push(cause, wrapped);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return undefined;
}

/**
 * The run moved on since the writer read it: nothing was written. Without `runId` (a
 * `deleteSession` given `eventCount`): the session moved on, and the seqs are its event counts
 * (last commit cursors), expected and found; nothing was deleted.
 */
export class ConflictError extends LedgerError {
  readonly actualSeq: number;
  readonly expectedSeq: number;
  constructor(options: {
    expectedSeq: number;
    actualSeq: number;
    sessionId: string;
    runId?: string;
    /** Says more than the default message where the writer knows why it conflicted. */
    message?: string;
  }) {
    const { message, ...details } = options;
    super(
      "conflict",
      message ??
        (options.runId === undefined
          ? `session ${options.sessionId} holds ${options.actualSeq} events, ${options.expectedSeq} when the caller looked: it was written to since, and nothing was deleted`
          : `run ${options.runId} is at seq ${options.actualSeq}, the writer expected ${options.expectedSeq}`),
      { details },
    );
    this.name = "ConflictError";
    this.actualSeq = options.actualSeq;
    this.expectedSeq = options.expectedSeq;
  }
}

/** `fork` into `runId`, which exists already with `actualSeq` events: `conflict`, as every store says it. */
export function forkTargetTaken(
  sessionId: string,
  runId: string,
  actualSeq: number,
): ConflictError {
  return new ConflictError({
    sessionId,
    runId,
    expectedSeq: 0,
    actualSeq,
    message: `run ${runId} exists already (${actualSeq} events): a fork makes a new run, give it a run id not in use`,
  });
}

/**
 * `fork` from a run the store does not hold (`length` undefined: at `$.runId`), or up to past
 * its end (at `$.uptoSeq`): `not-found`, as every store says it.
 */
export function forkSourceMissing(
  request: { sessionId: string; runId: string; uptoSeq: number },
  length?: number,
): NotFoundError {
  const { sessionId, runId, uptoSeq } = request;
  if (length === undefined)
    return new NotFoundError(`run ${runId} not found in session ${sessionId}`, {}, "$.runId");
  return new NotFoundError(
    `run ${runId} has ${length} events; cannot fork up to ${uptoSeq}`,
    { length },
    "$.uptoSeq",
  );
}

/** An eventId is already used in the session by an event with other content. */
export class DuplicateEventError extends LedgerError {
  readonly eventId: string;
  constructor(options: { eventId: string; path?: string; reason?: string }) {
    super(
      "duplicate-event",
      options.reason ?? `event ${options.eventId} already exists with other content`,
      { path: options.path, details: { eventId: options.eventId } },
    );
    this.name = "DuplicateEventError";
    this.eventId = options.eventId;
  }
}

/** The run has a terminal event; it accepts no more appends. */
export class RunClosedError extends LedgerError {
  constructor(options: {
    sessionId: string;
    runId: string;
    status: string;
    /** Says more than the default message where the writer knows why the run was closed to it. */
    message?: string;
  }) {
    const { message, ...details } = options;
    super(
      "run-closed",
      message ?? `run ${options.runId} is ${options.status} and accepts no more events`,
      { details },
    );
    this.name = "RunClosedError";
  }
}

/**
 * A payload is not plain JSON; `path` names the first bad value. `advice`, where the writer
 * knows what the value is, says what to pass instead.
 */
export class NonSerializableError extends LedgerError {
  /** What the value at `path` is ("a Date"), as the message says it. */
  readonly found: string;
  constructor(path: string, what: string, advice?: string) {
    const found = `${path} is ${what}, which is not plain JSON`;
    super("non-serializable", advice === undefined ? found : `${found}. ${advice}`, { path });
    this.name = "NonSerializableError";
    this.found = what;
  }
}

/** `error`, a `non-serializable` one, told again with `advice` after it; any other as it is. */
export function withAdvice(error: unknown, advice: string): unknown {
  if (!LedgerError.isInstance(error, "non-serializable")) return error;
  const { found } = error as Partial<NonSerializableError>;
  if (typeof found !== "string" || error.path === undefined) return error;
  return new NonSerializableError(error.path, found, advice);
}

/** An envelope field is malformed (bad id, unknown type, bad seq); `path` names it. */
export class InvalidEventError extends LedgerError {
  constructor(path: string, message: string) {
    super("invalid-event", `${path}: ${message}`, { path });
    this.name = "InvalidEventError";
  }
}

export class NotFoundError extends LedgerError {
  constructor(message: string, details: Record<string, unknown> = {}, path?: string) {
    super("not-found", message, path === undefined ? { details } : { details, path });
    this.name = "NotFoundError";
  }
}

/** `init({ create: false })` where no ledger is yet: `what` says what is missing. */
export function noLedgerError(location: string, what: string): NotFoundError {
  return new NotFoundError(`no ledger at ${location}: ${what}`, { location });
}

/** A ledger's version as `init()` found it, against the one this release reads. */
export interface LedgerVersionFound {
  /** Where the ledger is, as the store names it (a file, a database, a key prefix). */
  location: string;
  /** What is versioned: "schema", or Redis' "key layout". */
  what: string;
  found: number;
  reads: number;
}

/**
 * `init({ upgrade: false })` on a ledger of an older release: its `found` version is behind the
 * one this release `reads` (`what`: "schema", or Redis' "key layout"). Left as it was.
 */
export function olderLedgerError(options: LedgerVersionFound): InvalidArgumentError {
  const { location, what, found, reads } = options;
  return new InvalidArgumentError(
    "$.upgrade",
    `the ledger at ${location} is at ${what} version ${found}, an older release's; this release reads ${what} version ${reads}. It was left as it was (upgrade: false): upgrade it (agent-ledger upgrade, or init() without upgrade: false) once no agent of an older release writes to it`,
    { details: { found, reads } },
  );
}

/**
 * A ledger a newer release upgraded: its `found` version is ahead of the one this release
 * `reads` (`what` as for olderLedgerError). Refused by every `init()`, whatever its options, and
 * left as it was. Not `store-unavailable`: the store answered, and asking again (a supervisor
 * restarting the agent, a script retrying exit 4) never opens it. `invalid-argument` at `$`
 * (the store as given names a ledger this release cannot read), `details: { found, reads }`.
 */
export function newerLedgerError(options: LedgerVersionFound): InvalidArgumentError {
  const { location, what, found, reads } = options;
  return new InvalidArgumentError(
    "$",
    `the ledger at ${location} is at ${what} version ${found}, a newer release's; this release reads ${what} version ${reads} (and upgrades older ones). It was left as it was: open it with the release of @agent-ledger/core (and agent-ledger) that upgraded it, or a later one; no release takes a ledger back to an older ${what}`,
    { details: { found, reads } },
  );
}

/** The store could not be reached or dropped the connection; `cause` is the driver error. */
export class StoreUnavailableError extends LedgerError {
  /**
   * True when the store knows the operation wrote nothing (a SQLite transaction refused for a
   * full disk, a lock or a read-only file rolls back whole), also as `details.nothingWritten`.
   * Else the outcome of a write is unknown: it may be stored (a connection lost after the
   * server committed).
   */
  readonly nothingWritten: boolean;
  constructor(message: string, cause?: unknown, options: { nothingWritten?: boolean } = {}) {
    super("store-unavailable", message, {
      cause,
      ...(options.nothingWritten ? { details: { nothingWritten: true } } : {}),
    });
    this.name = "StoreUnavailableError";
    this.nothingWritten = options.nothingWritten === true;
  }
}

/** True for a `store-unavailable` whose store knows the operation wrote nothing. */
export function wroteNothing(error: unknown): boolean {
  return (
    LedgerError.isInstance(error, "store-unavailable") &&
    (error as { details?: { nothingWritten?: unknown } }).details?.nothingWritten === true
  );
}

/**
 * Whether a write that failed with `error` may have been written all the same: a
 * `store-unavailable` its store does not know wrote nothing (the reply lost with the
 * connection, a timeout), or anything that is no `LedgerError` (a driver's own error). Any other
 * `LedgerError` is a refusal, and nothing was written. The commit queue reads such a batch's run
 * back; the recorder keeps its request or outcome until then.
 */
export function outcomeUnknown(error: unknown): boolean {
  return (
    !LedgerError.isInstance(error) || (error.code === "store-unavailable" && !wroteNothing(error))
  );
}

/** On replay, a call differs from the one recorded at the same position. */
export class ReplayDivergenceError extends LedgerError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("replay-divergence", message, { details });
    this.name = "ReplayDivergenceError";
  }
}

/** A recorded call was left in flight (by a crash or by its caller stopping it) and may not be run again blindly. */
export class UnresolvedAttemptError extends LedgerError {
  readonly attemptId: string;
  /**
   * The attempt as `SessionRecorder` hands it out, for `retry(error.attempt)` or
   * `abandon(error.attempt, reason)` once a person has checked its effect.
   */
  readonly attempt: Attempt;
  constructor(
    message: string,
    details: { attemptId: string } & Record<string, unknown>,
    attempt: Attempt,
  ) {
    super("unresolved-attempt", message, { details });
    this.name = "UnresolvedAttemptError";
    this.attemptId = details.attemptId;
    this.attempt = attempt;
  }
}

/** A run's hash chain does not verify; `badSeq` is the first event that fails. */
export class TamperDetectedError extends LedgerError {
  readonly badSeq: number;
  constructor(options: { sessionId: string; runId: string; badSeq: number; reason: string }) {
    super(
      "tamper-detected",
      `run ${options.runId} fails verification at seq ${options.badSeq}: ${options.reason}`,
      { details: { ...options } },
    );
    this.name = "TamperDetectedError";
    this.badSeq = options.badSeq;
  }
}

/** A call's options or a store URL are malformed; `path` names the bad value. */
export class InvalidArgumentError extends LedgerError {
  constructor(
    path: string,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super("invalid-argument", `${path}: ${message}`, {
      path,
      cause: options.cause,
      details: options.details,
    });
    this.name = "InvalidArgumentError";
  }
}
