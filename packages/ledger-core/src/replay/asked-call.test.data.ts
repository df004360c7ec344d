import { LedgerError } from "../events/errors.js";
import type { Attempt } from "../recorder/attempt.js";

/**
 * What a call made on resume got: the recorded outcome (`replayed`), a new attempt (it `runs`),
 * or a refusal's code with the attempt it carries (`unresolved-attempt`'s), if any.
 */
export async function asked(request: Promise<Attempt>) {
  try {
    const attempt = await request;
    return attempt.replayed
      ? { replayed: attempt.replayed.status, attemptId: attempt.attemptId }
      : { runs: attempt.attemptId, retryOf: attempt.retryOf };
  } catch (error) {
    if (LedgerError.isInstance(error))
      return {
        refused: error.code,
        attemptId: (error as { attempt?: Attempt }).attempt?.attemptId,
      };
    throw error;
  }
}
