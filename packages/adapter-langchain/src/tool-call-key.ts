import { hashJson, type JsonValue } from "@agent-ledger/core";

/**
 * The key of a tool call among those the handler tracks: its LangGraph thread and its
 * toolCallId. One handler can serve several threads, and models (fake ones, some providers)
 * give the same ids in each ("call_1"): by toolCallId alone, one thread's call would be taken
 * for another's. A call outside any thread has the thread `undefined`.
 */
export function toolCallKey(threadId: string | undefined, toolCallId: string): string {
  return JSON.stringify([threadId ?? null, toolCallId]);
}

/**
 * The key of a tool call without an id: its thread, name and request hash. Such calls are
 * matched by name and order; the request narrows them to the same call, so that another call
 * of the same tool in the thread does not count as this one.
 */
export function contentCallKey(
  threadId: string | undefined,
  name: string,
  requestHash: string,
): string {
  return JSON.stringify([threadId ?? null, null, name, requestHash]);
}

/** What the recorder hashes of a tool call's request (`{ name, args }`, before any redact). */
export function toolRequestHash(name: string, args: JsonValue): string {
  return hashJson({ name, args });
}
