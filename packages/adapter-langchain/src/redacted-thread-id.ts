import { InvalidArgumentError, type SessionRecorder } from "@agent-ledger/core";
import { langchainMetadata } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";

/**
 * Refuses a LangGraph thread_id that the recorder's `redact` would take out of the metadata of
 * the calls it records (`metadata.langchain.threadId`): the thread id is a lookup key, not a
 * value the ledger can hide. It names the thread's runs (`thread:<thread_id>` in
 * THREAD_SESSIONS and in LedgerCheckpointSaver's session) and a resume matches recorded calls to
 * their thread by it, so a redacted one would be stored in the run ids anyway and would make a
 * resume take one thread's calls for another's. A redaction that removes it says the id holds
 * personal data (an email as thread_id): the call is refused before the id is written anywhere,
 * with `invalid-argument` at `$.configurable.thread_id`, and the message, which frameworks log,
 * does not repeat the id. Threads whose id the redaction keeps are recorded as before.
 */
export function assertThreadIdKept(recorder: SessionRecorder, threadId: string): void {
  const recorded = langchainMetadata({ threadId });
  const stored = recorder.metadataAsStored("model.requested", recorded);
  const kept = isRecord(stored.langchain) ? stored.langchain.threadId : undefined;
  if (isRecord(recorded.langchain) && kept === recorded.langchain.threadId) return;
  throw new InvalidArgumentError(
    "$.configurable.thread_id",
    "the recorder's redact removes this LangGraph thread_id from what it records (metadata.langchain.threadId), but the ledger finds a thread by its id: it names the thread's runs (thread:<thread_id>, in langchain-thread-sessions and LedgerCheckpointSaver's session) and matches a resumed thread's calls by it, so it cannot be hidden. The call was not made and the id was not recorded. Use an opaque thread_id (a random UUID your app maps to the user, or an HMAC of the user's id under a key you keep), and keep personal data in the graph's state or in payload fields the redaction reaches.",
  );
}
