import { InvalidArgumentError, LedgerError } from "../events/errors.js";

/**
 * One attempt, one outcome (§3): a `*.completed`, `*.failed` or `attempt.abandoned` event. An
 * attempt object this process already gave an outcome to (a completion racing an abort, a
 * `finally` that fails what just completed) is refused, instead of writing a second, conflicting
 * outcome that readers would silently ignore (they take the first). Kept per attempt object in
 * a WeakSet, so a long-lived recorder holds nothing for attempts the caller has dropped.
 */
const resolved = new WeakSet<object>();

/** The attempt kind each outcome type belongs to. */
const kindOfOutcome: Record<string, "model" | "tool"> = {
  "model.completed": "model",
  "model.failed": "model",
  "tool.completed": "tool",
  "tool.failed": "tool",
};

/**
 * Claims the outcome of `attempt` for an event of `type`: `invalid-argument` when the attempt
 * already has one from this process, or when `type` is for the other kind of call (a
 * `tool.completed` for a model attempt).
 */
function claimOutcome(attempt: object, type: string): void {
  const kind = kindOfOutcome[type];
  const given = (attempt as { kind?: unknown }).kind;
  if (kind !== undefined && given !== kind)
    throw new InvalidArgumentError(
      "$.kind",
      `${type} is the outcome of a ${kind} call, this attempt is ${typeof given === "string" ? `a ${given} call` : "not a model or tool call"}`,
    );
  if (resolved.has(attempt)) {
    const attemptId = (attempt as { attemptId?: unknown }).attemptId;
    throw new InvalidArgumentError(
      "$",
      `attempt ${String(attemptId)} already has an outcome: an attempt is completed, failed or abandoned once`,
    );
  }
  resolved.add(attempt);
}

/**
 * Notes that `attempt` already has its outcome in the ledger (an attempt answered from it on
 * resume): abandoning it is refused like a second outcome of this process's own.
 */
export function outcomeRecorded(attempt: object): void {
  resolved.add(attempt);
}

/**
 * Commits `attempt`'s outcome (an event of `type`) with `commit`, claimed first (see
 * `claimOutcome`). A refusal that wrote nothing (a `LedgerError` other than
 * `store-unavailable`) gives the claim back, so the outcome can be recorded again. An unknown
 * outcome (`store-unavailable`, or a driver error) keeps it: the event may be stored, and a
 * second try would be a second outcome with another eventId. The ledger then holds one or
 * none, and a resume settles the attempt as it finds it. The blobs an outcome keeps its
 * content in travel with its append (`AppendRequest.blobs`), so they share its fate.
 */
export async function commitOutcome<T>(
  attempt: object,
  type: string,
  commit: () => Promise<T>,
): Promise<T> {
  claimOutcome(attempt, type);
  try {
    return await commit();
  } catch (error) {
    if (LedgerError.isInstance(error) && error.code !== "store-unavailable")
      resolved.delete(attempt);
    throw error;
  }
}
