import {
  type JsonValue,
  LedgerError,
  readWholeSession,
  type SessionRecorder,
  TERMINAL_TYPES,
} from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";
import { contentCallKey, toolCallKey, toolRequestHash } from "./tool-call-key.js";

/** A tool call the guard looks up: by toolCallId, or without one by name and arguments. */
export interface HeldCall {
  threadId: string;
  toolCallId: string | undefined;
  name: string;
  args: JsonValue;
}

function keyOf(call: HeldCall): string {
  return call.toolCallId !== undefined
    ? toolCallKey(call.threadId, call.toolCallId)
    : contentCallKey(call.threadId, call.name, toolRequestHash(call.name, call.args));
}

/**
 * The tool calls that other open runs of the session hold, by (thread, toolCallId), or for a
 * call without an id by (thread, name, request hash). A handler built with a runId the session
 * does not have (a typo in the resumed process) starts a new run, and a LangGraph thread
 * resumed under it would run its interrupted tool call again: the run that recorded the call is
 * the one that knows it is in flight, or already done.
 *
 * Read once per handler, and only when first needed: when a tool call of a thread is about to
 * run that no model completion of the handler's own run asked for (the call comes from a
 * checkpoint, so the thread is resumed, under a run that did not record its turn). A run that
 * records its own turns (a new run, or the right runId resumed) never reads it. Runs that are
 * closed are left out: their owner ended them, and they cannot be continued any more.
 */
export class OtherRunCalls {
  /** The holders of the calls requested after a commit cursor (0: the whole session), by it. */
  readonly #holders = new Map<number, Promise<Map<string, string>>>();

  /**
   * Throws `invalid-argument` (`$.runId`) when another open run of the session holds this tool
   * call of this thread (requested, resolved or not): it must not run again under this run.
   * `after`: only a request committed after this session commit cursor counts (the completion
   * that asked for the call in this run: a later request of another run is a later turn of the
   * thread, which that run recorded).
   */
  async refuseHeld(recorder: SessionRecorder, call: HeldCall, after = 0): Promise<void> {
    let holders = this.#holders.get(after);
    if (!holders) {
      const read = readHolders(recorder, after);
      read.catch(() => {
        this.#holders.delete(after);
      });
      this.#holders.set(after, read);
      holders = read;
    }
    const holder = (await holders).get(keyOf(call));
    if (holder === undefined) return;
    const named =
      call.toolCallId !== undefined ? `${call.name} (${call.toolCallId})` : `${call.name} (no id)`;
    // The handler's runId is the bad value. Not conflict: that is a lost race, which writers
    // retry (this would fail again), and its errors carry the run's seq. Not
    // unresolved-attempt: there is no decision to take on an attempt of this run, and the
    // call may well be resolved there; the fix is to resume the run that holds it.
    throw new LedgerError(
      "invalid-argument",
      `$.runId: tool call ${named} of LangGraph thread ${call.threadId} is recorded in run ${holder} of session ${recorder.sessionId}, not in this handler's run ${recorder.runId}: the thread was resumed under another run (a mistyped runId?), so the tool is not run again here. Build the handler with runId "${holder}" to resume the run that holds it.`,
      {
        path: "$.runId",
        details: {
          runId: holder,
          handlerRunId: recorder.runId,
          sessionId: recorder.sessionId,
          threadId: call.threadId,
          toolCallId: call.toolCallId ?? null,
          name: call.name,
        },
      },
    );
  }
}

/**
 * Call key -> the open run other than the recorder's that requested it last. Calls made inside
 * another tool (caused by its `tool.requested`) are left out: no model asked for them, and the
 * guard checks only calls a model asked for.
 */
async function readHolders(recorder: SessionRecorder, after: number): Promise<Map<string, string>> {
  const events = await readWholeSession(recorder.store, recorder.sessionId, undefined, after);
  const closed = new Set<string>();
  const toolRequests = new Set<string>();
  const requested: { key: string; runId: string }[] = [];
  for (const event of events) {
    if (event.runId === recorder.runId) continue;
    if (TERMINAL_TYPES.has(event.type)) closed.add(event.runId);
    if (event.type !== "tool.requested") continue;
    toolRequests.add(event.eventId);
    const threadId = recordedThreadId(event);
    if (threadId === undefined) continue;
    if (event.causedByEventId !== undefined && toolRequests.has(event.causedByEventId)) continue;
    const payload = isRecord(event.payload) ? event.payload : {};
    const { toolCallId, name, requestHash } = payload;
    if (typeof toolCallId === "string")
      requested.push({ key: toolCallKey(threadId, toolCallId), runId: event.runId });
    else if (typeof name === "string" && typeof requestHash === "string")
      requested.push({ key: contentCallKey(threadId, name, requestHash), runId: event.runId });
  }
  const holders = new Map<string, string>();
  for (const { key, runId } of requested) if (!closed.has(runId)) holders.set(key, runId);
  return holders;
}
