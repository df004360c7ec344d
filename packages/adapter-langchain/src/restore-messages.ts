import {
  type EventStore,
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  type LedgerEvent,
  ledgerCommand,
  NotFoundError,
  readWholeRun,
  resolveEvents,
} from "@agent-ledger/core";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { abandonedCallText } from "./abandoned-message.js";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";
import { messageFromJson } from "./stored-messages.js";
import { STRUCTURED_RESPONSE_EVENT, structuredOutputTool } from "./structured-output-calls.js";
import { callsInSubgraphsError, hasCallIn, subgraphRunsWithCalls } from "./subgraph-calls.js";
import { isInterrupt, isRefusedOutcome } from "./tool-attempt.js";
import { toolRequestHash } from "./tool-call-key.js";
import { ledgerToolCallId } from "./tool-claim.js";

export interface RestoredMessages {
  /** The conversation as the last model call saw it, its answer, and the tool results since. */
  messages: BaseMessage[];
  /** Tool calls asked for by the last model completion that have no recorded result. */
  pendingToolCalls: ToolCall[];
  /**
   * A ToolMessage for each tool call of the last model completion that has a recorded outcome
   * (the end of `messages`): its result, its error, or why a person abandoned it. What a plain
   * graph stopped in its tools node is resumed with (README: Plain LangGraph graphs).
   */
  toolMessages: ToolMessage[];
}

function field(event: LedgerEvent, name: string): JsonValue | undefined {
  return isRecord(event.payload) ? event.payload[name] : undefined;
}

export interface RestoreMessagesOptions {
  /** Resolve content-addressed payloads (default true); `false` keeps the stored markers. */
  resolve?: boolean;
  /**
   * The LangGraph thread (`configurable.thread_id`) to restore, for a run that served several
   * (one handler, several threads): its last completed model call and the outcomes of its tool
   * calls. Required when the run recorded calls in more than one thread.
   */
  threadId?: string;
}

/**
 * Rebuilds a run's message history from the ledger (no checkpointer needed): the messages of
 * the agent's last turn (its last completed model call: not one a tool made, nor a structured
 * output given as a tool call, nor another node's call made beside the turn's tool calls, see
 * `agentTurn`), the message it answered with, and a ToolMessage for each tool call it asked for
 * that has a recorded outcome. The others are `pendingToolCalls`. In a run that served several
 * LangGraph threads, of the thread `options.threadId`.
 */
export async function restoreMessages(
  store: EventStore,
  address: { sessionId: string; runId: string },
  options: RestoreMessagesOptions = {},
): Promise<RestoredMessages> {
  const { threadId } = options;
  if (typeof address === "object" && address !== null && "threadId" in address)
    throw new InvalidArgumentError(
      "$.threadId",
      "the thread goes in the options, the third argument: restoreMessages(store, { sessionId, runId }, { threadId })",
    );
  if (threadId !== undefined && typeof threadId !== "string")
    throw new InvalidArgumentError(
      "$.threadId",
      "threadId must be a string (a LangGraph thread_id)",
    );
  const stored = await readWholeRun(store, address);
  const events = options.resolve === false ? stored : await resolveEvents(store, stored);
  if (events.length === 0)
    throw new NotFoundError(`run ${address.runId} not found in session ${address.sessionId}`, {
      ...address,
    });
  if (!hasCallIn(events, threadId)) {
    // The thread's calls ran inside subgraphs: restored here, none would be answered.
    const subgraphs = await subgraphRunsWithCalls(store, address, threadId);
    if (subgraphs.length > 0) throw callsInSubgraphsError(store, address, threadId, subgraphs);
  }
  const inThread = threadFilter(events, address, threadId, store);
  const requests = new Map<string, LedgerEvent>();
  // The tool attempts of the thread: only their outcomes answer its calls.
  const toolAttempts = new Set<string>();
  const completions: LedgerEvent[] = [];
  let lastRequest: LedgerEvent | undefined;
  for (const event of events) {
    if (event.type === "tool.requested" && event.attemptId && inThread(event))
      toolAttempts.add(event.attemptId);
    if (event.type === "model.requested" && event.attemptId) {
      if (insideTool(event) || answersWithToolCall(event) || !inThread(event)) continue;
      requests.set(event.attemptId, event);
      lastRequest = event;
    }
    if (event.type === "model.completed" && event.attemptId && requests.has(event.attemptId))
      completions.push(event);
  }
  const lastCompletion = agentTurn(completions, requests);
  const anchor = lastCompletion?.attemptId ? requests.get(lastCompletion.attemptId) : lastRequest;
  const messages: BaseMessage[] = [];
  const request = anchor ? field(anchor, "request") : undefined;
  const history = isRecord(request) && Array.isArray(request.messages) ? request.messages : [];
  for (const item of history) {
    const message = messageFromJson(item);
    if (message) messages.push(message);
  }
  if (!lastCompletion) return { messages, pendingToolCalls: [], toolMessages: [] };

  const response = field(lastCompletion, "response");
  const generation =
    isRecord(response) &&
    Array.isArray(response.generations) &&
    Array.isArray(response.generations[0])
      ? response.generations[0][0]
      : undefined;
  const answer = isRecord(generation) ? messageFromJson(generation.message) : undefined;
  if (answer) messages.push(answer);
  // A structured output the agent answers itself (toolStrategy) is no call a tool node runs.
  const answeredByAgent = structuredOutputTool(
    isRecord(anchor?.metadata) ? anchor.metadata.structuredOutput : undefined,
  );
  const answeredIds = answeredStructuredCalls(events, lastCompletion);
  const calls = ((answer as { tool_calls?: ToolCall[] } | undefined)?.tool_calls ?? []).filter(
    (call) => !answeredByAgent(call.name) && !(call.id !== undefined && answeredIds.has(call.id)),
  );

  // Outcomes of tool calls recorded after the completion, by toolCallId, and by step.
  const outcomes = new Map<string, LedgerEvent>();
  const stepOutcomes = new Map<string, LedgerEvent>();
  // Calls without an id (models may give an empty one): their steps by name, in request order.
  const unnamedSteps = new Map<string, string[]>();
  const after = events.filter((event) => event.seq > lastCompletion.seq);
  for (const event of after) {
    const toolCallId = field(event, "toolCallId");
    if (event.type === "tool.requested") {
      if (typeof toolCallId === "string" || event.causedByEventId !== lastCompletion.eventId)
        continue;
      const name = String(field(event, "name"));
      const steps = unnamedSteps.get(name) ?? [];
      if (event.stepId !== undefined && !steps.includes(event.stepId)) steps.push(event.stepId);
      unnamedSteps.set(name, steps);
      continue;
    }
    if (!["tool.completed", "tool.failed", "attempt.abandoned"].includes(event.type)) continue;
    if (event.attemptId === undefined || !toolAttempts.has(event.attemptId)) continue;
    // Paused at a LangGraph interrupt(), or stopped by a refusal inside it (as earlier versions
    // recorded one): the tool runs again when the graph resumes.
    const error = field(event, "error");
    if (event.type === "tool.failed" && (isInterrupt(error) || isRefusedOutcome(error))) continue;
    if (typeof toolCallId === "string") outcomes.set(toolCallId, event);
    if (event.stepId !== undefined) stepOutcomes.set(event.stepId, event);
  }
  const pendingToolCalls: ToolCall[] = [];
  const toolMessages: ToolMessage[] = [];
  for (const call of calls) {
    const toolCallId = ledgerToolCallId(call.id);
    const stepId = toolCallId === undefined ? unnamedSteps.get(call.name)?.shift() : undefined;
    const outcome =
      toolCallId !== undefined
        ? outcomes.get(toolCallId)
        : stepId !== undefined
          ? stepOutcomes.get(stepId)
          : undefined;
    if (!outcome) {
      pendingToolCalls.push(call);
      continue;
    }
    toolMessages.push(toolMessageOf(outcome, call));
  }
  messages.push(...toolMessages);
  if (pendingToolCalls.length === 0) {
    // The run's turn asks for nothing more, but the thread went on inside subgraphs (a node of
    // the run's own, then a subgraph's tools node): restored here, the stopped turn would be
    // taken for done, and the subgraph's calls would not be named.
    const last = lastOfTurns(events, inThread);
    const subgraphs = await subgraphRunsWithCalls(store, address, threadId, last);
    if (subgraphs.length > 0)
      throw callsInSubgraphsError(store, address, threadId, subgraphs, true);
  }
  return { messages, pendingToolCalls, toolMessages };
}

/**
 * The commit cursor of the run's last event of a call of the thread (a request, or an outcome
 * of one): a subgraph's call committed after it is a later turn than the run's.
 */
function lastOfTurns(
  events: readonly LedgerEvent[],
  inThread: (request: LedgerEvent) => boolean,
): number {
  const attempts = new Set<string>();
  let last = 0;
  for (const event of events) {
    if (event.attemptId === undefined) continue;
    const request = event.type === "model.requested" || event.type === "tool.requested";
    if (request && inThread(event)) attempts.add(event.attemptId);
    if (attempts.has(event.attemptId)) last = Math.max(last, event.commitCursor);
  }
  return last;
}

/**
 * Which requests belong to the thread restored: those of `threadId`. Without one, every request,
 * unless the run recorded calls in more than one thread: its last completion would be any
 * thread's, and its tool call ids (the same in every thread, with many models) would pair one
 * thread's calls with another's results. A run recorded before threads were (no request has
 * one) is restored whole, as before; asked for a thread, a run with no call at all is refused.
 */
function threadFilter(
  events: readonly LedgerEvent[],
  address: { sessionId: string; runId: string },
  threadId: string | undefined,
  store: EventStore,
): (request: LedgerEvent) => boolean {
  const threads = new Set<string>();
  for (const event of events) {
    if (event.type !== "model.requested" && event.type !== "tool.requested") continue;
    const thread = recordedThreadId(event);
    if (thread !== undefined) threads.add(thread);
  }
  if (threads.size === 0 && (threadId === undefined || hasCallIn(events, undefined)))
    return () => true;
  const names = [...threads].map((thread) => JSON.stringify(thread)).join(", ");
  if (threadId !== undefined) {
    // A mistyped thread would restore nothing, and the recipe would then run every call again.
    if (!threads.has(threadId))
      throw new NotFoundError(
        `run ${address.runId} of session ${address.sessionId} recorded no call in LangGraph thread ${JSON.stringify(threadId)} (${threads.size > 0 ? `its threads: ${names}` : "it recorded no call"}): check the runId and the thread_id: ${ledgerCommand(store, "inspect", [address.sessionId])}`,
        { ...address, threadId },
        "$.threadId",
      );
    return (request) => recordedThreadId(request) === threadId;
  }
  if (threads.size === 1) return () => true;
  throw new InvalidArgumentError(
    "$.threadId",
    `run ${address.runId} of session ${address.sessionId} recorded calls in ${threads.size} LangGraph threads (${names}): pass the threadId to restore (its thread_id), so that one thread's tool calls are not answered with another's results`,
  );
}

/**
 * The agent's last turn among the thread's completions (in order): the last one that asked for
 * tool calls, or a later one that carries its conversation on (its request holds every one of
 * those calls, asked for or answered: the agent's next turn, e.g. its final answer). A
 * completion after it that does not is another node's model call (a worker of a `Send` fan-out,
 * a summarizer beside the tools, even one handed one of the calls or its result), not the
 * agent's turn. With no completion asking for tool calls, the last one.
 */
function agentTurn(
  completions: readonly LedgerEvent[],
  requests: ReadonlyMap<string, LedgerEvent>,
): LedgerEvent | undefined {
  let asking = completions.length - 1;
  while (asking >= 0 && askedCalls(completions[asking] as LedgerEvent).length === 0) asking--;
  if (asking < 0) return completions.at(-1);
  const asked = completions[asking] as LedgerEvent;
  const calls = askedCalls(asked);
  let turn = asked;
  for (const later of completions.slice(asking + 1)) {
    const request = later.attemptId ? requests.get(later.attemptId) : undefined;
    if (request && carriesOn(request, calls)) turn = later;
  }
  return turn;
}

/** The tool calls a completion asked for, as recorded (`response.toolCalls`). */
function askedCalls(completion: LedgerEvent): JsonObject[] {
  const response = field(completion, "response");
  const calls = isRecord(response) && Array.isArray(response.toolCalls) ? response.toolCalls : [];
  return calls.filter((call): call is JsonObject => isRecord(call));
}

/**
 * True when the request's messages hold every one of `calls`: a message asking for it (by id,
 * or for a call without one by name and arguments) or a result of it (its `tool_call_id`). The
 * agent's next turn carries its whole last turn on; a `Send` worker or a node beside the tools
 * that hands its model one of the calls, or one result, does not.
 */
function carriesOn(request: LedgerEvent, calls: readonly JsonObject[]): boolean {
  const ids = new Set<string>();
  const unnamed = new Set<string>();
  for (const call of calls) {
    const id = typeof call.id === "string" ? ledgerToolCallId(call.id) : undefined;
    if (id !== undefined) ids.add(id);
    else unnamed.add(requestOf(call));
  }
  const payload = field(request, "request");
  const history = isRecord(payload) && Array.isArray(payload.messages) ? payload.messages : [];
  for (const message of history) {
    const data = isRecord(message) ? message.data : undefined;
    if (!isRecord(data)) continue;
    if (typeof data.tool_call_id === "string") ids.delete(data.tool_call_id);
    for (const call of Array.isArray(data.tool_calls) ? data.tool_calls : []) {
      if (!isRecord(call)) continue;
      const id = typeof call.id === "string" ? ledgerToolCallId(call.id) : undefined;
      if (id !== undefined) ids.delete(id);
      else unnamed.delete(requestOf(call));
    }
    if (ids.size === 0 && unnamed.size === 0) return true;
  }
  return false;
}

// A call without an id, as the recorder hashes a tool request: by name and arguments.
const requestOf = (call: JsonObject) =>
  toolRequestHash(typeof call.name === "string" ? call.name : "", call.args ?? null);

/**
 * A call whose answer is a structured output given as a tool call (`withStructuredOutput` with
 * `functionCalling`, as the handler records it in `request.structuredOutput` from LangChain's
 * call options, or in `metadata.structuredOutput` for the base withStructuredOutput, which
 * passes none): no tool node runs that call, and the answer is a node's value, not a turn of
 * the conversation.
 */
function answersWithToolCall(request: LedgerEvent): boolean {
  const payload = field(request, "request");
  const structured = isRecord(payload) ? payload.structuredOutput : undefined;
  if (isRecord(structured) && structured.method === "functionCalling") return true;
  const noted = isRecord(request.metadata) ? request.metadata.structuredOutput : undefined;
  return isRecord(noted) && noted.method === "functionCalling";
}

/**
 * The ids of the tool calls of `completion` that createAgent answered itself as its structured
 * response (`toolStrategy`, noted by the handler as its model node ended, with or without
 * ledgerMiddleware, also for a bare schema: `STRUCTURED_RESPONSE_EVENT`).
 */
function answeredStructuredCalls(
  events: readonly LedgerEvent[],
  completion: LedgerEvent,
): Set<string> {
  const ids = new Set<string>();
  for (const event of events) {
    if (event.type !== STRUCTURED_RESPONSE_EVENT) continue;
    if (event.causedByEventId !== completion.eventId) continue;
    const toolCalls = field(event, "toolCalls");
    for (const call of Array.isArray(toolCalls) ? toolCalls : [])
      if (isRecord(call) && typeof call.id === "string") ids.add(call.id);
  }
  return ids;
}

/**
 * A model call that a running tool made (an LLM inside a tool): part of that tool call, not a
 * turn of the conversation. The handler names the tool's request in its metadata.
 */
function insideTool(request: LedgerEvent): boolean {
  const langchain = isRecord(request.metadata) ? request.metadata.langchain : undefined;
  return isRecord(langchain) && typeof langchain.insideTool === "string";
}

function toolMessageOf(outcome: LedgerEvent, call: ToolCall): ToolMessage {
  const base = { tool_call_id: call.id ?? "", name: call.name };
  if (outcome.type === "tool.completed") {
    const result = field(outcome, "result");
    const message = messageFromJson(result);
    if (message && ToolMessage.isInstance(message)) return message;
    return new ToolMessage({
      ...base,
      content: typeof result === "string" ? result : JSON.stringify(result),
    });
  }
  if (outcome.type === "tool.failed") {
    const error = field(outcome, "error");
    const text = isRecord(error) ? String(error.message ?? "failed") : "failed";
    return new ToolMessage({ ...base, content: `Error: ${text}`, status: "error" });
  }
  return new ToolMessage({
    ...base,
    content: abandonedCallText(String(field(outcome, "reason") ?? "abandoned")),
    status: "error",
  });
}
