import { InvalidArgumentError, outcomeUnknown } from "../events/errors.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { Attempt } from "./attempt.js";

/** The attempt kind each outcome type belongs to. */
const kindOfOutcome: Record<string, "model" | "tool"> = {
  "model.completed": "model",
  "model.failed": "model",
  "tool.completed": "tool",
  "tool.failed": "tool",
};

/** The event types that give an attempt its outcome. */
const OUTCOME_TYPES = new Set([...Object.keys(kindOfOutcome), "attempt.abandoned"]);

/** True for an event type that gives an attempt its outcome (`record` guards those too). */
export function isOutcomeType(type: string): boolean {
  return OUTCOME_TYPES.has(type);
}

/** The attempt kind an outcome type belongs to; undefined for `attempt.abandoned`. */
export function outcomeKind(type: string): "model" | "tool" | undefined {
  return kindOfOutcome[type];
}

/**
 * One attempt, one outcome (§3): a `*.completed`, `*.failed` or `attempt.abandoned` event. The
 * attempts of one run that may still get theirs, by id: those its recorder requested, and on
 * resume those the ledger holds without one. An outcome claims its attempt here, so a second
 * one (a completion racing an abort, a `finally` that fails what just completed) is refused
 * whatever object names the attempt: the one `before*` returned, a copy, or bare ids read from
 * inspection; so is an outcome for an attempt this run never requested. Keyed by id, not by
 * object, and only while open: a long-lived recorder holds an entry per call in flight (or left
 * unresolved), none for the attempts that got their outcome.
 */
export class OpenAttempts {
  readonly #open = new Map<string, "model" | "tool">();
  /**
   * Attempts whose outcome's append failed with its outcome unknown: until the run is read
   * back, then kept once the read found the outcome stored, to say so to a second try.
   */
  readonly #unsure = new Map<string, UnsureOutcome>();
  /**
   * Attempts the read-back of an unknown append left open where the caller does not see them
   * open: a request stored although its `before*` rejected, an outcome found not stored. While
   * one is still open, the run is not completed (`stranded`).
   */
  readonly #stranded = new Map<string, Stranded>();

  /** Notes an attempt whose request is committed and that has no outcome yet. */
  open(attemptId: string, kind: "model" | "tool"): void {
    this.#open.set(attemptId, kind);
  }

  /** Notes a recorded event of the run, read on resume: requests open, outcomes close. */
  read(event: LedgerEvent): void {
    if (event.attemptId === undefined) return;
    if (event.type === "model.requested") this.#open.set(event.attemptId, "model");
    else if (event.type === "tool.requested") this.#open.set(event.attemptId, "tool");
    else if (OUTCOME_TYPES.has(event.type)) this.#open.delete(event.attemptId);
  }

  /** The kind of an open attempt of `runId`, else `invalid-argument` saying why it is not. */
  openKind(
    attemptId: unknown,
    attemptRun: unknown,
    runId: string,
    doing: string,
  ): "model" | "tool" {
    const open = typeof attemptId === "string" ? this.#open.get(attemptId) : undefined;
    if (open !== undefined) return open;
    const unsure = typeof attemptId === "string" ? this.#unsure.get(attemptId) : undefined;
    if (unsure !== undefined) throw unsureOutcome(attemptId as string, unsure);
    throw new InvalidArgumentError(
      "$",
      typeof attemptRun === "string" && attemptRun !== runId
        ? `attempt ${String(attemptId)} is an attempt of run ${attemptRun}, not of run ${runId}: ${doing} with that run's recorder`
        : `attempt ${String(attemptId)} already has an outcome (an attempt is completed, failed or abandoned once), or run ${runId} never requested it`,
    );
  }

  /**
   * Hears what reading the run back found of an outcome whose append's outcome was unknown
   * (the commit queue's `readBack`): not stored, its attempt is open again and the outcome can
   * be recorded again; stored, a second try is told so.
   */
  readBack(event: NewEvent, stored: LedgerEvent | undefined): void {
    // Claimed, the attempt got no other outcome from this recorder: this event is the one.
    const unsure = event.attemptId === undefined ? undefined : this.#unsure.get(event.attemptId);
    if (unsure === undefined || !OUTCOME_TYPES.has(event.type)) return;
    if (stored !== undefined) {
      unsure.storedAt = stored.seq;
      return;
    }
    this.#unsure.delete(event.attemptId as string);
    this.#open.set(event.attemptId as string, unsure.kind);
    this.#stranded.set(event.attemptId as string, {
      attempt: unsure.attempt,
      why: `its ${unsure.type} did not get in (its append failed with the store unavailable, and reading the run back did not find it)`,
    });
  }

  /**
   * Opens a request found stored although its `before*` rejected: it may be adopted by the call
   * that retries it (then `adopted`), or decided (`abandon`); left so, it is `stranded`.
   */
  strand(attempt: Attempt, why: string): void {
    this.#open.set(attempt.attemptId, attempt.kind);
    this.#stranded.set(attempt.attemptId, { attempt, why });
  }

  /** A stranded request adopted by the call that retried it: an open call like any other. */
  adopted(attemptId: string): void {
    this.#stranded.delete(attemptId);
  }

  /** Whether `attemptId` is open (may still get an outcome). */
  isOpen(attemptId: string): boolean {
    return this.#open.has(attemptId);
  }

  /** The stranded attempts still without an outcome, in the order they were stranded. */
  stranded(): Stranded[] {
    for (const id of this.#stranded.keys()) if (!this.#open.has(id)) this.#stranded.delete(id);
    return [...this.#stranded.values()];
  }

  /**
   * Commits `attempt`'s outcome (an event of `type`) with `commit`, which must call `claim`
   * right before it appends, in the recorder's turn: a resumed child's attempts are known only
   * once its run is read, and two outcomes made together must find the first one's claim. The
   * claim is `invalid-argument` (nothing written) when the attempt is not open on `runId`, or
   * when `type` is for the other kind of call (a `tool.completed` for a model attempt). A
   * refusal that wrote nothing (a `LedgerError` other than `store-unavailable`, or one whose
   * store knows it wrote nothing: SQLite on a full disk) gives the claim back, so the outcome
   * can be recorded again. An unknown outcome (`store-unavailable`, or a driver error) keeps
   * it: the event may be stored, and a second try would be a second outcome with another
   * eventId. The recorder's next write reads the run back first (`readBack`): if the outcome is
   * not there, the claim is given back then. The blobs an outcome keeps its content in travel
   * with its append (`AppendRequest.blobs`), so they share its fate.
   */
  async settle<T>(
    attempt: object,
    type: string,
    runId: string,
    commit: (claim: () => void) => Promise<T>,
  ): Promise<T> {
    const {
      attemptId,
      kind: given,
      runId: attemptRun,
    } = attempt as {
      attemptId?: unknown;
      kind?: unknown;
      runId?: unknown;
    };
    const kind = kindOfOutcome[type];
    if (kind !== undefined && given !== kind) throw wrongKind(type, kind, given);
    let claimed: "model" | "tool" | undefined;
    const claim = () => {
      const open = this.openKind(attemptId, attemptRun, runId, "record its outcome");
      if (kind !== undefined && open !== kind) throw wrongKind(type, kind, open);
      this.#open.delete(attemptId as string);
      claimed = open;
    };
    try {
      return await commit(claim);
    } catch (error) {
      if (claimed === undefined) throw error;
      if (!outcomeUnknown(error)) this.#open.set(attemptId as string, claimed);
      else
        this.#unsure.set(attemptId as string, { kind: claimed, type, attempt: attempt as Attempt });
      throw error;
    }
  }
}

/** An outcome whose append failed with its outcome unknown (see `OpenAttempts.readBack`). */
interface UnsureOutcome {
  kind: "model" | "tool";
  type: string;
  /** The attempt as the caller named it. */
  attempt: Attempt;
  /** The seq it was found stored at, once the run was read back. */
  storedAt?: number;
}

/** An attempt left open by an unknown append's read-back (see `OpenAttempts.stranded`). */
export interface Stranded {
  attempt: Attempt;
  /** Why it is open, in words that follow "its call ..." ("its tool.completed did not get in"). */
  why: string;
}

/** Why an outcome is not recorded a second time after its first append's outcome was unknown. */
function unsureOutcome(attemptId: string, unsure: UnsureOutcome): InvalidArgumentError {
  return new InvalidArgumentError(
    "$",
    unsure.storedAt !== undefined
      ? `attempt ${attemptId} already has an outcome: its ${unsure.type} is stored (at seq ${unsure.storedAt}), though its append failed with the store unavailable (the reply was lost; reading the run back found it), so it is not recorded a second time: go on with the run`
      : `attempt ${attemptId}'s outcome may be stored: the append of its ${unsure.type} failed with the store unavailable, after it may have been written, and the run has not been read back yet; it is not recorded a second time until then. Call again once the store answers: the recorder reads the run back first, and records the outcome if it is not there`,
  );
}

/**
 * Checks, in the recorder's turn, that `attempt` is still open on `runId` without claiming it:
 * an approval (`attempt.approved`) is no outcome, but it is only heard by the run that holds
 * the attempt, and only while nothing has settled it.
 */
export function checkOpen(open: OpenAttempts, attempt: object, runId: string): () => void {
  const { attemptId, runId: attemptRun } = attempt as { attemptId?: unknown; runId?: unknown };
  return () => open.openKind(attemptId, attemptRun, runId, "approve it");
}

function wrongKind(type: string, kind: "model" | "tool", given: unknown): InvalidArgumentError {
  return new InvalidArgumentError(
    "$.kind",
    `${type} is the outcome of a ${kind} call, this attempt is ${typeof given === "string" ? `a ${given} call` : "not a model or tool call"}`,
  );
}
