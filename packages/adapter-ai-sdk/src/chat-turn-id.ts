import { hashJson, type JsonValue } from "@agent-ledger/core";
import type { ModelMessage } from "ai";
import { toJsonValue } from "./plain-json.js";

// A chat server records each request as one turn, a run of its own (README: "A chat app"). The
// run must be the same for the same request sent again (the client retried after the server
// died: the run is resumed and answered from the ledger, nothing made twice), and another for
// a request that goes on from the last (a person's approval, a client-side tool's output: the
// same user message is answered again, but the run that asked is closed). Named after the
// user message, a request that carries an approval found the run that asked closed, and the
// approved call was refused (`run-closed`); named after the whole request as sent, a client
// that regenerated the turn (its answer replayed from the ledger, the approval request made
// again by the SDK with a new random id) sent another request for the same approval, and the
// approved call, perhaps made already, was made again.

/** The approval id a `tool-approval-request` or `-response` part holds: the SDK's random one. */
function withoutApprovalIds(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(withoutApprovalIds);
  if (value === null || typeof value !== "object") return value;
  const approval =
    value.type === "tool-approval-request" || value.type === "tool-approval-response";
  const copy: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value))
    if (!(approval && (key === "approvalId" || key === "signature")))
      copy[key] = withoutApprovalIds(item);
  return copy;
}

/**
 * The id of the chat turn that answers `messages` (as the model gets them: from the UI
 * messages `useChat` posts, `await convertToModelMessages(messages)`): a sha256 of the
 * conversation, without the ids the SDK gives approval requests at random (the call an
 * approval answers is named by its toolCallId, which the ledger replays as recorded). The same
 * conversation sent again is the same turn; one that goes on from it (an approval, a tool's
 * output, a new message) is another. Name the turn's run after it (`turn-${chatTurnId(...)}`).
 *
 * The server's part of the request is left out: its `system` prompt, its tools, model and
 * settings. The id says which request of the client a run answers, so that the request sent
 * again finds the run that began answering it, whatever the server changed in between (a
 * deploy): the resume replays the calls recorded, and one whose request the change makes
 * different is refused with `replay-divergence` before it is made. A new turn instead would
 * make again every call the ledger answers, an approved refund among them. Two agents that
 * answer the same conversation in one chat (another system prompt each) name their runs apart:
 * `turn-${agent}-${chatTurnId(messages)}`.
 */
export function chatTurnId(messages: readonly ModelMessage[]): string {
  return hashJson(withoutApprovalIds(toJsonValue(messages, "$.messages")));
}
