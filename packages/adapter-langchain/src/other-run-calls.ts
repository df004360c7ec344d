import {
  type JsonValue,
  LedgerError,
  readWholeSession,
  type SessionRecorder,
  TERMINAL_TYPES,
} from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";
import { toolCallKey } from "./tool-call-key.js";

/**
 * The tool calls that other open runs of the session hold, by (thread, toolCallId). A handler
 * built with a runId the session does not have (a typo in the resumed process) starts a new
 * run, and a LangGraph thread resumed under it would run its interrupted tool call again: the
 * run that recorded the call is the one that knows it is in flight, or already done.
 *
 * Read once per handler, and only when first needed: when a tool call of a thread is about to
 * run that no model completion of the handler's own run asked for (the call comes from a
 * checkpoint, so the thread is resumed, under a run that did not record its turn). A run that
 * records its own turns (a new run, or the right runId resumed) never reads it. Runs that are
 * closed are left out: their owner ended them, and they cannot be continued any more.
 */
export class OtherRunCalls {
  #holders: Promise<Map<string, string>> | undefined;

  /**
   * Throws `invalid-argument` (`$.runId`) when another open run of the session holds this tool call of this
   * thread (requested, resolved or not): it must not run again under this run.
   */
  async refuseHeld(
    recorder: SessionRecorder,
    call: { threadId: string; toolCallId: string; name: string },
  ): Promise<void> {
    if (!this.#holders) {
      this.#holders = readHolders(recorder);
      this.#holders.catch(() => {
        this.#holders = undefined;
      });
    }
    const holder = (await this.#holders).get(toolCallKey(call.threadId, call.toolCallId));
    if (holder === undefined) return;
    // The handler's runId is the bad value. Not conflict: that is a lost race, which writers
    // retry (this would fail again), and its errors carry the run's seq. Not
    // unresolved-attempt: there is no decision to take on an attempt of this run, and the
    // call may well be resolved there; the fix is to resume the run that holds it.
    throw new LedgerError(
      "invalid-argument",
      `$.runId: tool call ${call.name} (${call.toolCallId}) of LangGraph thread ${call.threadId} is recorded in run ${holder} of session ${recorder.sessionId}, not in this handler's run ${recorder.runId}: the thread was resumed under another run (a mistyped runId?), so the tool is not run again here. Build the handler with runId "${holder}" to resume the run that holds it.`,
      {
        path: "$.runId",
        details: {
          runId: holder,
          handlerRunId: recorder.runId,
          sessionId: recorder.sessionId,
          threadId: call.threadId,
          toolCallId: call.toolCallId,
          name: call.name,
        },
      },
    );
  }
}

/** (thread, toolCallId) -> the open run other than the recorder's that requested it. */
async function readHolders(recorder: SessionRecorder): Promise<Map<string, string>> {
  const events = await readWholeSession(recorder.store, recorder.sessionId);
  const closed = new Set<string>();
  const requested: { key: string; runId: string }[] = [];
  for (const event of events) {
    if (event.runId === recorder.runId) continue;
    if (TERMINAL_TYPES.has(event.type)) closed.add(event.runId);
    if (event.type !== "tool.requested") continue;
    const threadId = recordedThreadId(event);
    const toolCallId = toolCallIdOf(event.payload);
    if (threadId !== undefined && toolCallId !== undefined)
      requested.push({ key: toolCallKey(threadId, toolCallId), runId: event.runId });
  }
  const holders = new Map<string, string>();
  for (const { key, runId } of requested) if (!closed.has(runId)) holders.set(key, runId);
  return holders;
}

function toolCallIdOf(payload: JsonValue | undefined): string | undefined {
  return isRecord(payload) && typeof payload.toolCallId === "string"
    ? payload.toolCallId
    : undefined;
}
