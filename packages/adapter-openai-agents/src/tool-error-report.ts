import {
  isJsonObject,
  type JsonValue,
  REDACTED,
  type SerializedError,
  type SessionRecorder,
} from "@agent-ledger/core";
import { getCurrentSpan } from "@openai/agents";

/**
 * What the SDK reported of a function tool call that failed but did not reject: the tool threw
 * (or its arguments were not valid JSON) and the SDK gave the model a message in place of a
 * result (the tool's `errorFunction`, by default "An error occurred while running the tool...").
 */
export interface ToolErrorReport {
  error: SerializedError;
}

/**
 * The `tool.failed` metadata key holding what the model was told in place of the result (the
 * `errorFunction`'s output, as JSON): a resumed run answers the call with it again.
 */
export const MODEL_WAS_TOLD = "modelWasTold";

/**
 * What the model was told, as the redaction of the recorder that records the `tool.failed`
 * leaves it in that payload beside the error (`{ error, modelWasTold }`, core's
 * `redactedPayload`): the text quotes the error ("...Error: <message>"), and a path that
 * removes it from the payload (`error.message`) does not name it in the metadata the text is
 * kept in (the metadata's own redaction, applied after, reaches it by `metadata.` paths, or a
 * function's second call with `{ metadata }`). The recorder's, not the
 * run's: a `ledgerTool` given a recorder of its own records there, inside a run or outside one.
 * A function that rewrites the strings of every payload rewrites it as it does the next model
 * request, which holds the same text, so a resumed run's request matches the recorded one. A
 * redaction that leaves no such field, or throws, leaves `[redacted]`.
 */
export function toldAsRecorded(
  told: JsonValue,
  error: SerializedError,
  recorder: SessionRecorder,
): JsonValue {
  try {
    const payload = { error: error as unknown as JsonValue, [MODEL_WAS_TOLD]: told };
    const redacted = recorder.redactedPayload("tool.failed", payload);
    return isJsonObject(redacted) && Object.hasOwn(redacted, MODEL_WAS_TOLD)
      ? (redacted[MODEL_WAS_TOLD] as JsonValue)
      : REDACTED;
  } catch {
    return REDACTED;
  }
}

interface ReportedSpanError {
  message?: unknown;
  data?: { error?: unknown } | null;
}

// "TypeError: x is not a function": the error's toString(), as the SDK reports it; a plain
// Error's is "Error: x", its name with nothing before it.
const NAMED_MESSAGE = /^((?:[A-Za-z_$][\w$]*)?(?:Error|Exception)): ([\s\S]*)$/;

function reportedError(reported: ReportedSpanError): SerializedError {
  const text =
    typeof reported.data?.error === "string"
      ? reported.data.error
      : typeof reported.message === "string"
        ? reported.message
        : "the tool failed";
  const named = NAMED_MESSAGE.exec(text);
  return named
    ? { name: named[1] as string, message: named[2] as string }
    : { name: "Error", message: text };
}

/** A call's output, and what the SDK reported of its failure if it made one the answer. */
export interface WatchedCall<T> {
  output: T;
  failure: ToolErrorReport | undefined;
}

/**
 * Runs `invoke` (the SDK's own invoke of a function tool) and says whether the SDK turned a
 * failure of the call into the model's answer. The SDK says so only on the call's function span
 * (`setError`, traced or not: with tracing off the span is a no-op one, still the current span
 * while the tool runs), so `setError` of that span is watched while `invoke` runs and restored
 * after. Each call has its own function span: parallel calls do not see each other's errors;
 * a tool call inside an agent tool reports on its own span, not on the agent tool's.
 * Outside a run (no current span, e.g. `invoke` called by the app) nothing can be seen.
 */
export async function invokeWatchingErrors<T>(invoke: () => Promise<T>): Promise<WatchedCall<T>> {
  const span = getCurrentSpan() as { setError?: (error: ReportedSpanError) => unknown } | null;
  const setError = span?.setError;
  if (span === null || typeof setError !== "function")
    return { output: await invoke(), failure: undefined };
  const own = Object.hasOwn(span, "setError");
  let failure: ToolErrorReport | undefined;
  span.setError = (reported: ReportedSpanError) => {
    failure = { error: reportedError(reported ?? {}) };
    return setError.call(span, reported);
  };
  try {
    const output = await invoke();
    return { output, failure };
  } finally {
    if (own) span.setError = setError;
    else delete span.setError;
  }
}
