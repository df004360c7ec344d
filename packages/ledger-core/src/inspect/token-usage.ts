import type { JsonObject } from "../events/json.js";
import { type TokenUsage, usageOf } from "../projections/model-usage.js";
import type { RunView } from "./inspection-views.js";
import { runsInTreeOrder } from "./run-tree-order.js";

/**
 * The tokens a model call's outcome event reports: a completed call's response, or the partial
 * response a failed one kept (a stream cut short still used tokens). Read from the payload as
 * stored: the counts stay in place when long text goes to the blob store. Undefined when it
 * says none.
 */
export function callUsage(payload: JsonObject, failed: boolean): TokenUsage | undefined {
  const usage = usageOf(failed ? payload.partial : payload.response);
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** Each count of `add` added to `total`'s (a count only one of them has is kept). */
function addUsage(total: TokenUsage, add: TokenUsage): void {
  for (const key of [
    "inputTokens",
    "outputTokens",
    "cachedTokens",
    "cacheCreationTokens",
  ] as const) {
    const value = add[key];
    if (value !== undefined) total[key] = (total[key] ?? 0) + value;
  }
}

/**
 * Sets `usage` on each run whose model calls reported tokens (`AttemptView.usage`, summed: its
 * own calls, not its child runs'), and answers the sum over every run of the tree: undefined
 * when no call reported any.
 */
export function addTokenUsage(runs: RunView[]): TokenUsage | undefined {
  const session: TokenUsage = {};
  let reported = false;
  for (const { run } of runsInTreeOrder(runs)) {
    const own: TokenUsage = {};
    let ownReported = false;
    for (const step of run.steps)
      for (const attempt of step.attempts) {
        if (attempt.usage === undefined) continue;
        addUsage(own, attempt.usage);
        ownReported = true;
      }
    if (!ownReported) continue;
    run.usage = own;
    addUsage(session, own);
    reported = true;
  }
  return reported ? session : undefined;
}
