/**
 * The names of the errors an aborted signal gives: `AbortError` (`controller.abort()`, a
 * DOMException) and `TimeoutError` (`AbortSignal.timeout`, LangGraph's `timeout`).
 */
const ABORT_ERROR_NAMES = new Set(["AbortError", "TimeoutError"]);

/**
 * True when a tool call's error is an abort: LangChain's `tool()` rejects the call at its
 * signal's abort with the signal's reason (without waiting for the tool, whose result it then
 * drops), and a tool that watches its signal throws it. Either way the call was cut off, not
 * answered: it may still take, or have taken, its effect. Recognized by the error's name, as
 * the callback gets no signal: an abort with a reason of another name (`abort("text")`,
 * `abort(new Error(...))`) reaches it as any other error.
 */
export function cutOffByAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === "string" && ABORT_ERROR_NAMES.has(name);
}
