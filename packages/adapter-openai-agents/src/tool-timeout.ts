import { ToolTimeoutError } from "@openai/agents";

/**
 * A function tool's `timeoutMs` is enforced by the runner around the tool's `invoke`: when it
 * fires, the runner stops waiting (the model is told the call timed out, or the run fails:
 * `timeoutBehavior`) and aborts the call's signal with a `ToolTimeoutError`, while the tool
 * itself may run on to its end. So the ledger sees the timeout only on that signal.
 */
function timeoutOf(signal: AbortSignal | undefined): ToolTimeoutError | undefined {
  return signal?.aborted === true && signal.reason instanceof ToolTimeoutError
    ? signal.reason
    : undefined;
}

/** What came first of a call and the runner's timeout (`untilTimeout`). */
export type TimeoutRace<T> = { done: T } | { timedOut: ToolTimeoutError };

/**
 * Runs `call` unless the runner's timeout fired already, and answers what came first: its
 * result, or the timeout (`{ timedOut }`). A call that loses the race is left to run in the
 * background; its later rejection is not reported (its outcome is the timeout's).
 */
export async function untilTimeout<T>(
  call: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<TimeoutRace<T>> {
  const before = timeoutOf(signal);
  if (before !== undefined) return { timedOut: before };
  const running = call();
  if (signal === undefined) return { done: await running };
  let stopWatching = () => {};
  const fired = new Promise<{ timedOut: ToolTimeoutError }>((settle) => {
    const onAbort = () => {
      const timedOut = timeoutOf(signal);
      if (timedOut !== undefined) settle({ timedOut });
    };
    signal.addEventListener("abort", onAbort, { once: true });
    stopWatching = () => signal.removeEventListener("abort", onAbort);
  });
  try {
    const first = await Promise.race([running.then((done) => ({ done })), fired]);
    if ("timedOut" in first) running.catch(() => undefined);
    return first;
  } finally {
    stopWatching();
  }
}

/**
 * A recorded timeout met again on resume: the call waits for the runner's timeout to fire again,
 * so the runner answers as it did (its timeout message to the model, or a failed run), in its
 * own words. Without a timeout on the call now (the tool lost its `timeoutMs`), it fails with
 * `recorded` at once.
 */
export function timeoutAgain(
  tool: { timeoutMs?: number | undefined },
  signal: AbortSignal | undefined,
  recorded: Error,
): Promise<never> {
  if (signal === undefined || tool.timeoutMs === undefined) return Promise.reject(recorded);
  return new Promise<never>((_, fail) => {
    const onAbort = () => fail(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Whether a recorded failure is a timeout of the runner's (see `timeoutAgain`). */
export function isRecordedTimeout(error: { name?: unknown }): boolean {
  return error.name === "ToolTimeoutError";
}
