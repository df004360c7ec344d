import {
  assertEventStore,
  type EventStore,
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  type KnownKeys,
  type LedgerEvent,
  readRecordedRun,
  resolveEvents,
} from "@agent-ledger/core";
import type { ModelMessage, ToolSet } from "ai";
import { checkedOptional, checkedOptionsObject } from "./adapter-options.js";
import { approvalIdOf, awaitedApproval } from "./approval-requests.js";
import { addApprovedCallRecords, isModelRequest, runContinued } from "./approved-calls.js";
import { parsedToolInput, toolNamed } from "./parsed-tool-input.js";
import { assistantPartsOf, type Part } from "./restored-assistant-message.js";
import { type ModelOutputOf, modelOutputOf, toolResultOf } from "./restored-tool-results.js";
import { payloadOf, toolCallRecordsOf } from "./tool-call-records.js";

export interface RestoreMessagesOptions {
  sessionId: string;
  runId: string;
  /** Keep system messages (default false: pass `system` to the SDK call yourself). */
  includeSystem?: boolean;
  /**
   * Resolve blob references of content-addressed payloads (default true). `false` returns
   * messages as stored, with `{ "$ledger": ... }` markers in place of externalized content
   * (a tool's `toModelOutput` is then given its output so).
   */
  resolve?: boolean;
  /**
   * The run's tools, as given to `generateText` / `streamText`: the results of the last step
   * then come back through their `toModelOutput`, as the SDK would give them to the model, and
   * its tool calls with the input their `inputSchema` parsed the model's to (defaults filled
   * in), as in the SDK's messages; a call waiting for a person's approval (its tool's
   * `needsApproval`) with its approval request (see `restoreConversation`). Without it, a
   * result is the recorded output, a call's input the model's, and no call is known to wait
   * for an approval.
   */
  tools?: ToolSet;
}

// A misspelt `includeSytem` would leave the system prompt out of the restore without a word.
const RESTORE_OPTIONS: KnownKeys<RestoreMessagesOptions> = {
  sessionId: true,
  runId: true,
  includeSystem: true,
  resolve: true,
  tools: true,
};

/**
 * A list of the recorded call (its prompt, its completion's content) as read. Read with
 * `resolve: false`, a list kept in the blob store as a whole is a `{ "$ledger": ... }` marker in
 * its place: no messages can be made of it, and going on would throw a TypeError.
 */
function storedList(value: unknown, what: string, event: LedgerEvent): JsonValue[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  throw new InvalidArgumentError(
    "$.resolve",
    `the ${what} of the model call at seq ${event.seq} of run ${event.runId} is kept in the blob store as a whole, and resolve: false leaves it so: no messages can be made of it; restore with resolve: true (the default), which puts it back`,
  );
}

/** A tool call of the last completion that has no recorded outcome (see `restoreConversation`). */
export interface PendingToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /**
   * `true`: its `tool.requested` is in the ledger (in this run, or, for a call a person
   * approved, in the later turn that ran it), so the tool was running at the crash and may have
   * had its effect. `false`: it had not started.
   */
  requested: boolean;
  /**
   * Set for a call that waits for a person's approval (its tool's `needsApproval`, from the
   * `tools` given): the assistant message holds its `tool-approval-request` with this id.
   * Answer with a `tool` message holding a `tool-approval-response` with it; the SDK then runs
   * the call (approved) or tells the model it was denied, before its first model call (the
   * middleware records the denial then: a restore of this run gives it as the call's result).
   */
  approvalId?: string;
  /**
   * `true` for a call the provider executes (an MCP server's tool) that the provider asked to
   * approve (`approvalId` is the provider's own). Answer it with `providerExecuted: true` on
   * the response: the SDK forwards only such responses to the provider, which then runs the
   * call (or not) in the next model call.
   */
  providerExecuted?: true;
}

/** A run's conversation, and the tool calls still waiting for a result. */
export interface RestoredConversation {
  /** What `restoreMessages` returns. */
  messages: ModelMessage[];
  /**
   * Tool calls of the last assistant message without a result (in flight at a crash, waiting
   * for a person's approval, or not started). The SDK refuses messages that end so
   * (`AI_MissingToolResultsError`): give each a tool result, or an approval response for one
   * waiting for approval (`approvalId`), before passing `messages` to it.
   */
  pendingToolCalls: PendingToolCall[];
}

/**
 * The conversation of a run as `ModelMessage[]`, to continue it in a chat app: the prompt of
 * the last model request, the assistant message of its completion, and the results of the tool
 * calls it asked for (recorded results, failures as error text). See `restoreConversation`.
 */
export async function restoreMessages(
  store: EventStore,
  options: RestoreMessagesOptions,
): Promise<ModelMessage[]> {
  return (await restoreConversation(store, options)).messages;
}

/**
 * `restoreMessages`, plus the tool calls of the last assistant message that have no recorded
 * result (`pendingToolCalls`), so that a chat app resuming after a crash, or continuing a chat
 * that stopped at a tool approval, can decide about them.
 *
 * The messages are what the model was given, or would be given next:
 * - The last language model request of the run (embedding calls are not turns of the
 *   conversation and are passed over) gives the conversation up to it, as recorded: the
 *   results of earlier steps in it are what the model saw, after their tools' `toModelOutput`.
 * - Its completion gives the assistant message. The results of the tool calls it asked for
 *   have not been seen by the model: no model call was recorded after them (the process
 *   stopped first, or the run ended there). The SDK would give the model what each tool's
 *   `toModelOutput` makes of the output, called as the SDK calls it, with the input the tool
 *   was called with, its toolCallId and the output as the tool returned it (bytes as a
 *   `Uint8Array`): pass the run's `tools` to get those. A tool without `toModelOutput`, or
 *   with no `tools` given, gives its recorded output: text if it is a string, else JSON (bytes
 *   as base64). A provider-executed tool's result in the assistant message is given so too.
 *   A failure is the error's text; a call abandoned, `abandoned: <reason>`; a call a person
 *   denied at its approval request (recorded by the turn that took the answer), the
 *   `execution-denied` the SDK gave the model, with their reason; none goes through
 *   `toModelOutput`, as in the SDK.
 * - A call a person approved ran in the next turn, a run of its own: its request and outcome
 *   there count as the call's (approved-calls.ts). A run that made no model call but began
 *   with such calls gives the conversation of the turn that asked for them.
 * A `toModelOutput` that throws rejects the restore with its error. The output it is given is
 * the recorded one: redacted if the recorder redacted it.
 */
export async function restoreConversation(
  store: EventStore,
  options: RestoreMessagesOptions,
): Promise<RestoredConversation> {
  // First: with the store left out, the options are the first argument and the second is
  // undefined, which would be reported as options missing.
  assertEventStore(store);
  checkedOptionsObject<RestoreMessagesOptions>(
    options,
    RESTORE_OPTIONS,
    "restoreMessages / restoreConversation",
    "{ sessionId, runId }",
  );
  checkedOptional(options.includeSystem, "$.includeSystem", "boolean");
  checkedOptional(options.resolve, "$.resolve", "boolean");
  const modelOutput = modelOutputOf(options.tools);
  // A mistyped id must not give an empty conversation: a chat server would start over.
  const stored = await readRecordedRun(store, {
    sessionId: options.sessionId,
    runId: options.runId,
  });
  const events = options.resolve === false ? stored : await resolveEvents(store, stored);
  if (events.some(isModelRequest)) return await conversationOf(store, options, modelOutput, events);
  // A turn that began by running the calls a person approved, and made no model call (cut off
  // by a crash in one): its conversation is the one of the turn that asked for them, whose
  // events are in the session read to find it.
  const continued = await runContinued(store, events);
  if (continued === undefined) return { messages: [], pendingToolCalls: [] };
  const { runId, session } = continued;
  const asking = session.filter((event) => event.runId === runId);
  return await conversationOf(
    store,
    options,
    modelOutput,
    options.resolve === false ? asking : await resolveEvents(store, asking),
    session,
  );
}

/**
 * The conversation of a run from its `events` (resolved unless `options.resolve` is false), as
 * `restoreConversation` gives it; `session`, the session's events as stored, if read already.
 */
async function conversationOf(
  store: EventStore,
  options: RestoreMessagesOptions,
  modelOutput: ModelOutputOf,
  events: LedgerEvent[],
  session?: LedgerEvent[],
): Promise<RestoredConversation> {
  const requested = events.findLast(isModelRequest);
  if (!requested) return { messages: [], pendingToolCalls: [] };
  const request = payloadOf(requested).request as JsonObject | undefined;
  const prompt = storedList(request?.prompt, "prompt", requested) as JsonObject[];
  const messages = prompt.filter(
    (message) => options.includeSystem === true || message.role !== "system",
  ) as unknown as ModelMessage[];
  const completed = events.find(
    (event) => event.type === "model.completed" && event.attemptId === requested.attemptId,
  );
  if (!completed) return { messages, pendingToolCalls: [] };
  const response = payloadOf(completed).response as JsonObject | undefined;
  const { parts, toolCallIds, providerApprovals } = await assistantPartsOf(
    storedList(response?.content, "completion's content", completed),
    modelOutput,
  );
  // The conversation the SDK asked a tool's needsApproval about: before the assistant message.
  const before = [...messages];
  if (parts.length > 0) messages.push({ role: "assistant", content: parts } as ModelMessage);
  // Every id in toolCallIds is a tool-call part's.
  const calls = new Map<string, Part>();
  for (const item of parts as Part[])
    if (item.type === "tool-call") calls.set(String(item.toolCallId), item);
  const records = toolCallRecordsOf(events, completed);
  // A call approved by a person ran in a later turn, not in this run.
  const unrecorded = toolCallIds
    .filter((toolCallId) => !records.requested.has(toolCallId))
    .map((toolCallId) => ({ toolCallId, toolName: String(calls.get(toolCallId)?.toolName) }));
  await addApprovedCallRecords(store, completed, unrecorded, records, {
    resolve: options.resolve !== false,
    session,
  });
  const results: unknown[] = [];
  const pendingToolCalls: PendingToolCall[] = [];
  for (const toolCallId of toolCallIds) {
    const outcome = records.outcomes.get(toolCallId);
    const call = calls.get(toolCallId) as Part;
    const toolName = String(call.toolName);
    const tool = toolNamed(options.tools, toolName);
    // As the SDK's assistant message: the input its tool's schema parsed the model's to.
    const parsed = tool && (await parsedToolInput(tool, call.input));
    if (parsed) (call as { input: unknown }).input = parsed.input;
    if (outcome) {
      // The input the tool was called with (as the SDK's schema parsed it), else the model's.
      const called = records.inputs.has(toolCallId) ? records.inputs.get(toolCallId) : call.input;
      results.push(
        await toolResultOf(outcome, { toolCallId, toolName, input: called }, modelOutput),
      );
      continue;
    }
    const requested = records.requested.has(toolCallId);
    const approvalId = approvalIdOf(completed.eventId, toolCallId);
    const approval =
      tool && parsed && !requested
        ? await awaitedApproval(tool, { toolCallId, toolName, approvalId, ...parsed }, before)
        : undefined;
    // As the SDK's assistant message: the approval requests after the rest.
    if (approval) parts.push(approval);
    pendingToolCalls.push({
      toolCallId,
      toolName,
      input: call.input,
      requested,
      ...(approval ? { approvalId } : {}),
    });
  }
  // A provider's call that waits for approval: no result in the message yet.
  for (const [toolCallId, approvalId] of providerApprovals) {
    const call = calls.get(toolCallId);
    const answered = (parts as Part[]).some(
      (part) => part.type === "tool-result" && part.toolCallId === toolCallId,
    );
    if (call === undefined || answered) continue;
    pendingToolCalls.push({
      toolCallId,
      toolName: String(call.toolName),
      input: call.input,
      requested: false,
      approvalId,
      providerExecuted: true,
    });
  }
  if (results.length > 0) messages.push({ role: "tool", content: results } as ModelMessage);
  return { messages, pendingToolCalls };
}
