import { InvalidArgumentError, LedgerError, wroteNothing } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";

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
    throw new InvalidArgumentError(
      "$",
      typeof attemptRun === "string" && attemptRun !== runId
        ? `attempt ${String(attemptId)} is an attempt of run ${attemptRun}, not of run ${runId}: ${doing} with that run's recorder`
        : `attempt ${String(attemptId)} already has an outcome (an attempt is completed, failed or abandoned once), or run ${runId} never requested it`,
    );
  }

  /**
   * Commits `attempt`'s outcome (an event of `type`) with `commit`, which must call `claim`
   * right before it appends, in the recorder's turn: a resumed child's attempts are known only
   * once its run is read, and two outcomes made together must find the first one's claim. The
   * claim is `invalid-argument` (nothing written) when the attempt is not open on `runId`, or
   * when `type` is for the other kind of call (a `tool.completed` for a model attempt). A
   * refusal that wrote nothing (a `LedgerError` other than `store-unavailable`, or one whose
   * store knows it wrote nothing: SQLite on a full disk) gives the claim back, so the outcome
   * can be recorded again. An unknown outcome (`store-unavailable`, or a
   * driver error) keeps it: the event may be stored, and a second try would be a second outcome
   * with another eventId. The ledger then holds one or none, and a resume settles the attempt
   * as it finds it. The blobs an outcome keeps its content in travel with its append
   * (`AppendRequest.blobs`), so they share its fate.
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
      if (
        claimed !== undefined &&
        LedgerError.isInstance(error) &&
        (error.code !== "store-unavailable" || wroteNothing(error))
      )
        this.#open.set(attemptId as string, claimed);
      throw error;
    }
  }
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
