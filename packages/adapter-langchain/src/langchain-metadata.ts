import type { JsonObject, RecordedAttempt } from "@agent-ledger/core";
import { isRecord, toJsonValue } from "./plain-json.js";

/** An event's `metadata.langchain`: LangChain's ids and tags (undefined ones left out). */
export function langchainMetadata(fields: Record<string, unknown>): JsonObject {
  const langchain: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) langchain[key] = toJsonValue(value);
  }
  return { langchain };
}

/** The `signal` LangChain hands a model call in its start callback's extra params, if any. */
export function signalOf(
  extraParams: Record<string, unknown> | undefined,
): AbortSignal | undefined {
  const options = extraParams?.options;
  const signal = isRecord(options) ? options.signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/**
 * The LangGraph thread a call runs in: `thread_id`, which LangGraph copies from
 * `configurable` into the metadata of every callback (and which ledgerMiddleware reads from
 * the runtime's `configurable`). Undefined outside a LangGraph thread.
 */
export function threadIdOf(source: Record<string, unknown> | undefined): string | undefined {
  const threadId = source?.thread_id;
  if (typeof threadId === "string") return threadId;
  return typeof threadId === "number" ? String(threadId) : undefined;
}

/** The thread a recorded call ran in (`metadata.langchain.threadId`); undefined in a ledger written before threads were recorded. */
export function recordedThreadId(event: { metadata?: JsonObject | undefined }): string | undefined {
  const langchain = event.metadata?.langchain;
  return isRecord(langchain) && typeof langchain.threadId === "string"
    ? langchain.threadId
    : undefined;
}

/**
 * Accepts the recorded calls of thread `threadId`, and those recorded without a thread (a ledger
 * written before threads were recorded); undefined (accept all) outside a thread. One handler
 * may serve several threads, whose calls are matched on resume only within their own.
 */
export function inThread(
  threadId: string | undefined,
): ((recorded: RecordedAttempt) => boolean) | undefined {
  if (threadId === undefined) return undefined;
  return (recorded) => {
    const recordedThread = recordedThreadId(recorded.requested);
    return recordedThread === undefined || recordedThread === threadId;
  };
}
