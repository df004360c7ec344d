import { type Actor, type EventStore, SessionRecorder, uuidv7 } from "@agent-ledger/core";
import { percentile, type Row } from "./stats.js";

const filler = "lorem ipsum dolor sit amet ".repeat(12);

/**
 * Requests of an agent's conversation, one per call: the same long system prompt, then one
 * more message each call (about 370 bytes, never seen before), for 40 turns, then a new
 * conversation. With the recorder's compaction (the default), every call stores its new
 * message and list node as blobs, with the event that names them (`AppendRequest.blobs`): what
 * a model call of a real agent costs, where the suites' other rows send one short message again
 * and again, which names no blob after the first call.
 */
export function growingConversation(): () => unknown {
  const messages: { role: string; content: string }[] = [];
  const system = { role: "system", content: "You are a helpful agent. ".repeat(60) };
  let turn = 0;
  return () => {
    if (messages.length === 0 || messages.length > 40) messages.splice(0, messages.length, system);
    const role = messages.length % 2 === 1 ? "user" : "assistant";
    messages.push({ role, content: `${uuidv7()} turn ${turn++} ${filler}` });
    return { model: "bench-model", messages: [...messages], temperature: 0 };
  };
}

/** A started run of its own on `store` and the call each conversation row times on it. */
export async function conversationCall(store: EventStore, actor: Actor): Promise<() => unknown> {
  const talker = new SessionRecorder({ store, sessionId: uuidv7(), actor });
  await talker.startRun();
  const nextRequest = growingConversation();
  return () => talker.beforeModelCall({ request: nextRequest() });
}

/** The row of the calls of `growingConversation`, against the suite's raw write at p50. */
export function conversationRow(
  store: string,
  ours: number[],
  base: number[],
  baselineName: string,
): Row {
  const value = percentile(ours, 50);
  const baseline = percentile(base, 50);
  return {
    name: `  ${store} beforeModelCall, conversation in blobs, p50`,
    value,
    unit: "µs",
    baseline,
    baselineName,
    ratio: value / baseline,
    note: "new message and list node stored as blobs with the event naming them",
  };
}
