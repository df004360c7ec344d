import { InvalidArgumentError } from "../events/errors.js";

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
 * `tool.completed` for a model attempt). Call `releaseOutcome` if the event is not committed.
 */
export function claimOutcome(attempt: object, type: string): void {
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

/** Undoes `claimOutcome` when the outcome event could not be committed (so it can be retried). */
export function releaseOutcome(attempt: object): void {
  resolved.delete(attempt);
}
