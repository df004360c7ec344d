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
import { checkedOptional, checkedOptionsObject, checkedToolSet } from "./adapter-options.js";
import { approvalIdOf, awaitedApproval } from "./approval-requests.js";
import { addApprovedCallRecords, isModelRequest, runContinued } from "./approved-calls.js";
import { deniedOutput } from "./denied-approvals.js";
import { parsedToolInput, toolNamed } from "./parsed-tool-input.js";
import { toolErrorText } from "./replayed-errors.js";
import { payloadOf, toolCallRecordsOf } from "./tool-call-records.js";
import { decodeToolOutput } from "./tool-output.js";

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

type Part = JsonObject & { type?: string };

/** What the SDK passes a tool's `toModelOutput`. */
interface ToolOutputOptions {
  toolCallId: string;
  input: unknown;
  output: unknown;
}

/**
 * What the model is given for a tool's output, as the SDK makes it: what the tool's
 * `toModelOutput` makes of `output` (the output as the tool returned it), or else the output
 * as recorded (`recorded`, bytes as base64), as text if it is a string, else as JSON.
 */
type ModelOutputOf = (
  toolName: string,
  options: ToolOutputOptions,
  recorded: JsonValue,
) => Promise<unknown>;

function modelOutputOf(tools: unknown): ModelOutputOf {
  if (tools !== undefined) checkedToolSet(tools, "$.tools");
  const toolSet = tools as ToolSet | undefined;
  return async (toolName, options, recorded) => {
    const tool = toolNamed(toolSet, toolName);
    const toModelOutput = tool?.toModelOutput;
    // Called on the tool, as the SDK calls it.
    if (typeof toModelOutput === "function") return await toModelOutput.call(tool, options);
    // As the SDK decides: a Date returned is a JSON output, though recorded as a string.
    return typeof recorded === "string" && !(options.output instanceof Date)
      ? { type: "text", value: recorded }
      : { type: "json", value: recorded };
  };
}

function parseInput(input: JsonValue | undefined): unknown {
  if (typeof input !== "string") return input ?? {};
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/**
 * The assistant message's parts; the calls the app runs (`toolCallIds`); and the approvals the
 * provider asked for its own calls (`providerApprovals`: approvalId by toolCallId).
 */
async function assistantPartsOf(
  content: JsonValue[],
  modelOutput: ModelOutputOf,
): Promise<{ parts: unknown[]; toolCallIds: string[]; providerApprovals: Map<string, string> }> {
  const parts: unknown[] = [];
  const toolCallIds: string[] = [];
  const providerApprovals = new Map<string, string>();
  // The input of each call, for its provider-executed result's toModelOutput.
  const inputs = new Map<string, unknown>();
  for (const item of content) {
    const part = item as Part;
    const providerOptions = part.providerMetadata ? { providerOptions: part.providerMetadata } : {};
    switch (part.type) {
      case "text":
        // The SDK leaves empty text parts out of the messages it sends back.
        if (part.text !== "") parts.push({ type: "text", text: part.text, ...providerOptions });
        break;
      case "reasoning":
        parts.push({ type: "reasoning", text: part.text, ...providerOptions });
        break;
      case "file":
        parts.push({
          type: "file",
          data: part.data,
          mediaType: part.mediaType,
          ...providerOptions,
        });
        break;
      case "tool-call": {
        // A provider-executed call has its result in this message, not in a tool message.
        if (part.providerExecuted !== true) toolCallIds.push(String(part.toolCallId));
        const input = parseInput(part.input);
        inputs.set(String(part.toolCallId), input);
        parts.push({
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input,
          ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
          ...providerOptions,
        });
        break;
      }
      case "tool-result": {
        // A provider-executed tool's result stays in the assistant message (the provider
        // expects it with its call), as the SDK's response messages keep it.
        const result = part.result ?? null;
        const toolCallId = String(part.toolCallId);
        const output =
          part.isError === true
            ? { type: "error-json", value: result }
            : await modelOutput(
                String(part.toolName),
                { toolCallId, input: inputs.get(toolCallId), output: result },
                result,
              );
        parts.push({
          type: "tool-result",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output,
          ...providerOptions,
        });
        break;
      }
      case "tool-approval-request": {
        // A provider's request to approve a tool it executes (an MCP server's tool): in its
        // place, with the provider's id, as the SDK's message holds it. (The requests of the
        // app's own tools are the SDK's, made again from the run's tools: awaitedApproval.)
        const toolCallId = String(part.toolCallId);
        providerApprovals.set(toolCallId, String(part.approvalId));
        parts.push({ type: "tool-approval-request", approvalId: part.approvalId, toolCallId });
        break;
      }
      default:
        // Sources are not part of the conversation sent back.
        break;
    }
  }
  return { parts, toolCallIds, providerApprovals };
}

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

/**
 * The tool result part of an outcome, for the call the assistant message made (`input`: what
 * the tool was called with). A failure is its error's text, as the SDK gives it.
 */
async function toolResultOf(
  event: LedgerEvent,
  call: { toolCallId: string; toolName: string; input: unknown },
  modelOutput: ModelOutputOf,
): Promise<unknown> {
  const { toolCallId, toolName, input } = call;
  const payload = payloadOf(event);
  let output: unknown;
  if (event.type === "tool.completed") {
    const result = payload.result ?? null;
    // The output as the tool returned it, bytes included, for its toModelOutput.
    const returned = decodeToolOutput(result, event.metadata);
    output = await modelOutput(toolName, { toolCallId, input, output: returned }, result);
  } else if (event.type === "tool.failed") {
    output = { type: "error-text", value: toolErrorText(payload.error, event.metadata) };
  } else {
    // A call a person denied: what the SDK gave the model for it.
    output = deniedOutput(event) ?? {
      type: "error-text",
      value: `abandoned: ${String(payload.reason ?? "")}`,
    };
  }
  return { type: "tool-result", toolCallId, toolName, output };
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
