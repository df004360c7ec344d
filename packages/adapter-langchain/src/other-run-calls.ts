import {
  type EventStore,
  type JsonValue,
  LedgerError,
  readWholeSession,
  type SessionRecorder,
  TERMINAL_TYPES,
} from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";
import { SUBGRAPH_FIELD } from "./subgraph-runs.js";
import { contentCallKey, toolCallKey, toolRequestHash } from "./tool-call-key.js";

/**
 * The open run that holds a call (`runId`), and the run a handler records in above it
 * (`handlerRun`: the same run, or the handler's run above a subgraph's child run).
 */
interface Holder {
  runId: string;
  handlerRun: string;
}

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
 * the one that knows it is in flight, or already done. The same holds for a handler built
 * with another sessionId than the one that recorded the thread: the open runs of the other
 * sessions that recorded it (`ThreadSessions` names them) are looked up the same way.
 *
 * Each session is read once per handler, and only when first needed: when a tool call of a thread is about to
 * run that no model completion of the handler's own run asked for (the call comes from a
 * checkpoint, so the thread is resumed, under a run that did not record its turn). A run that
 * records its own turns (a new run, or the right runId resumed) never reads it. Runs that are
 * closed are left out: their owner ended them, and they cannot be continued any more.
 */
export class OtherRunCalls {
  /** Where the handler's run id came from: what a refusal says of why its run is another. */
  readonly #origin: RunIdOrigin;
  /** The handler's run: the root of the subgraphs' child runs it records calls in. */
  readonly #root: () => Promise<SessionRecorder>;

  constructor(origin: RunIdOrigin, root: () => Promise<SessionRecorder>) {
    this.#origin = origin;
    this.#root = root;
  }

  /**
   * The holders of the calls requested in a session after a commit cursor (0: the whole
   * session), by session and cursor.
   */
  readonly #holders = new Map<string, Promise<Map<string, Holder>>>();

  /**
   * Throws `invalid-argument` (`$.runId`) when another open run of the session holds this tool
   * call of this thread (requested, resolved or not): it must not run again under this run.
   * `after`: only a request committed after this session commit cursor counts (the completion
   * that asked for the call in this run: a later request of another run is a later turn of the
   * thread, which that run recorded).
   */
  async refuseHeld(recorder: SessionRecorder, call: HeldCall, after = 0): Promise<void> {
    const held = await this.#holder(recorder, recorder.sessionId, call, after);
    // A call a subgraph's child run of the handler's own run holds is the handler's own.
    const handlerRunId = (await this.#root()).runId;
    if (held === undefined || held.handlerRun === handlerRunId) return;
    const holder = held.handlerRun;
    const recordedIn =
      held.runId === holder ? "" : ` (in ${held.runId}, a LangGraph subgraph's child run of it)`;
    // The handler's runId is the bad value. Not conflict: that is a lost race, which writers
    // retry (this would fail again), and its errors carry the run's seq. Not
    // unresolved-attempt: there is no decision to take on an attempt of this run, and the
    // call may well be resolved there; the fix is to resume the run that holds it.
    throw new LedgerError(
      "invalid-argument",
      `$.runId: tool call ${named(call)} of LangGraph thread ${call.threadId} is recorded in run ${holder}${recordedIn} of session ${recorder.sessionId}, not in this handler's run ${handlerRunId}: ${whyAnotherRun(this.#origin, after)}, so the tool is not run again here. ${howToResume(this.#origin, holder)}`,
      {
        path: "$.runId",
        details: {
          runId: holder,
          handlerRunId,
          sessionId: recorder.sessionId,
          threadId: call.threadId,
          toolCallId: call.toolCallId ?? null,
          name: call.name,
        },
      },
    );
  }

  /**
   * Throws `invalid-argument` (`$.sessionId`) when an open run of one of `sessions` (other
   * sessions that recorded the call's thread, see `ThreadSessions`) holds this tool call of
   * this thread: the thread was resumed under another session than the one that recorded it.
   * Each session is read once per handler, when first needed.
   */
  async refuseHeldElsewhere(
    recorder: SessionRecorder,
    call: HeldCall,
    sessions: readonly string[],
  ): Promise<void> {
    for (const sessionId of sessions) {
      const held = await this.#holder(recorder, sessionId, call, 0);
      if (held === undefined) continue;
      const holder = held.handlerRun;
      const recordedIn =
        held.runId === holder ? "" : ` (in ${held.runId}, a LangGraph subgraph's child run of it)`;
      // The handler's sessionId is the bad value, as its runId is above.
      throw new LedgerError(
        "invalid-argument",
        `$.sessionId: tool call ${named(call)} of LangGraph thread ${call.threadId} is recorded in run ${holder}${recordedIn} of session ${sessionId}, not in this handler's session ${recorder.sessionId}: the thread was resumed under another session (a mistyped sessionId, a setting left out?), so the tool is not run again here. Build the handler with sessionId "${sessionId}" and runId "${holder}" to resume the run that holds it.`,
        {
          path: "$.sessionId",
          details: {
            sessionId,
            runId: holder,
            handlerSessionId: recorder.sessionId,
            handlerRunId: (await this.#root()).runId,
            threadId: call.threadId,
            toolCallId: call.toolCallId ?? null,
            name: call.name,
          },
        },
      );
    }
  }

  /** The open run of `sessionId` (other than the recorder's) that holds `call`, if any. */
  async #holder(
    recorder: SessionRecorder,
    sessionId: string,
    call: HeldCall,
    after: number,
  ): Promise<Holder | undefined> {
    const key = `${sessionId}\u0000${after}`;
    let holders = this.#holders.get(key);
    if (!holders) {
      const own = sessionId === recorder.sessionId ? recorder.runId : undefined;
      const read = readHolders(recorder.store, sessionId, own, after);
      read.catch(() => {
        this.#holders.delete(key);
      });
      this.#holders.set(key, read);
      holders = read;
    }
    return (await holders).get(keyOf(call));
  }
}

/**
 * Where the handler's run id came from: its `runId` option (`given`), none (`chosen`: the
 * handler started a run of its own), or the recorder given to it (`recorder`).
 */
export type RunIdOrigin = "given" | "chosen" | "recorder";

/** Why the handler's run is not the one holding the call, in words that match the case. */
function whyAnotherRun(origin: RunIdOrigin, after: number): string {
  // A run that recorded an earlier turn of the thread: its runId is right for that turn.
  if (after > 0)
    return "that run recorded a later turn of the thread than this run did, and the thread's checkpoint holds that turn";
  if (origin === "chosen")
    return "this handler was built without a runId, so it started a run of its own rather than resume the run that recorded the thread";
  if (origin === "recorder")
    return "the recorder given to this handler is on another run than the one that recorded the thread";
  return "the thread was resumed under another run (a mistyped runId?)";
}

function howToResume(origin: RunIdOrigin, holder: string): string {
  return origin === "recorder"
    ? `Give the handler a recorder on run "${holder}" (SessionRecorder.resume) to resume the run that holds it.`
    : `Build the handler with runId "${holder}" to resume the run that holds it.`;
}

function named(call: HeldCall): string {
  return call.toolCallId !== undefined
    ? `${call.name} (${call.toolCallId})`
    : `${call.name} (no id)`;
}

/**
 * Call key -> the open run of `sessionId` (other than `ownRunId`) that requested it last, named
 * by the run a handler records in: a call of a LangGraph subgraph's child run (subgraph-runs.ts)
 * is held by the handler's run above it, the runId a handler resumes it with (built with the
 * child run's id, it would open subgraph runs of its own below that one). Calls made inside
 * another tool (caused by its `tool.requested`) are left out: no model asked for them, and the
 * guard checks only calls a model asked for.
 */
async function readHolders(
  store: EventStore,
  sessionId: string,
  ownRunId: string | undefined,
  after: number,
): Promise<Map<string, Holder>> {
  const events = await readWholeSession(store, sessionId, undefined, after);
  const closed = new Set<string>();
  const toolRequests = new Set<string>();
  const requested: { key: string; runId: string }[] = [];
  // Each subgraph child run's parent run.
  const subgraphParent = new Map<string, string>();
  for (const event of events) {
    if (event.runId === ownRunId) continue;
    if (TERMINAL_TYPES.has(event.type)) closed.add(event.runId);
    if (event.type === "run.started" && event.parentRunId !== undefined && isSubgraph(event))
      subgraphParent.set(event.runId, event.parentRunId);
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
  const handlerRun = (runId: string): string => {
    let run = runId;
    for (
      let parent = subgraphParent.get(run);
      parent !== undefined;
      parent = subgraphParent.get(run)
    )
      run = parent;
    return run;
  };
  const holders = new Map<string, Holder>();
  for (const { key, runId } of requested)
    if (!closed.has(runId)) holders.set(key, { runId, handlerRun: handlerRun(runId) });
  return holders;
}

/** True for the `run.started` of a LangGraph subgraph's child run. */
function isSubgraph(started: { payload?: JsonValue }): boolean {
  return isRecord(started.payload) && isRecord(started.payload[SUBGRAPH_FIELD]);
}
