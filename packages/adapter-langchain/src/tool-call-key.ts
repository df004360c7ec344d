/**
 * The key of a tool call among those the handler tracks: its LangGraph thread and its
 * toolCallId. One handler can serve several threads, and models (fake ones, some providers)
 * give the same ids in each ("call_1"): by toolCallId alone, one thread's call would be taken
 * for another's. A call outside any thread has the thread `undefined`.
 */
export function toolCallKey(threadId: string | undefined, toolCallId: string): string {
  return JSON.stringify([threadId ?? null, toolCallId]);
}
