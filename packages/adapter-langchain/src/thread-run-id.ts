import { hasLoneSurrogate, isValidId, type JsonObject, sha256Hex } from "@agent-ledger/core";

// How a LangGraph thread_id is named in the ledger: the run that holds a thread (the
// checkpoint saver's, the handler's record of the sessions that recorded it) and the payload
// fields that name it. Nothing here loads LangGraph: the callback handler uses it too.

/**
 * The ledger run that holds one LangGraph thread: `thread:<thread_id>`, or, when that is not a
 * valid ledger id (too long, control characters), `thread-sha256:<hex>` with the hex SHA-256 of
 * the thread_id's UTF-8 bytes. UTF-8 turns every lone surrogate into U+FFFD, so `a\uD800` and
 * `a\uDBFF` would share a run: an id with lone surrogates hashes its JSON text instead (which
 * keeps them apart), under its own prefix so that it cannot meet a well-formed id's hash.
 */
export function threadRunId(threadId: string): string {
  const plain = `thread:${threadId}`;
  if (isValidId(plain)) return plain;
  return hasLoneSurrogate(threadId)
    ? `thread-json-sha256:${sha256Hex(JSON.stringify(threadId))}`
    : `thread-sha256:${sha256Hex(threadId)}`;
}

/**
 * The thread_id as payload fields. The ledger's JSON refuses strings with lone surrogates, which
 * a JS thread_id may hold: such an id is kept as its JSON text (`JSON.stringify` escapes them as
 * `\udxxx`), which reads back as the exact same string.
 */
export function threadIdFields(threadId: string): { threadId: string } | { threadIdJson: string } {
  return !hasLoneSurrogate(threadId) ? { threadId } : { threadIdJson: JSON.stringify(threadId) };
}

/** The thread_id of a payload written with `threadIdFields`. */
export function payloadThreadId(payload: JsonObject | undefined): string | undefined {
  if (typeof payload?.threadId === "string") return payload.threadId;
  if (typeof payload?.threadIdJson !== "string") return undefined;
  const threadId: unknown = JSON.parse(payload.threadIdJson);
  return typeof threadId === "string" ? threadId : undefined;
}
