import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { NotFoundError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { EventStore } from "../store/event-store.js";
import { isObject, textOf, toolResultOf } from "./extract.js";
import { type Completion, completionOf } from "./model-completions.js";
import { type HistoryMessage, requestMessages } from "./request-messages.js";
import { causeOf, loadSessionModel, type RunRecord } from "./session-model.js";

export interface MessageHistoryOptions {
  sessionId: string;
  /** Defaults to the session's first root run. */
  runId?: string;
}

const HISTORY_OPTIONS: KnownKeys<MessageHistoryOptions> = { sessionId: true, runId: true };

/**
 * The content of a call's answer: its text, and before it the reasoning it came with as a
 * `reasoning` part, as an earlier answer's is read from a request (OpenAI Agents' reasoning
 * item, see `requestMessages`; the AI SDK's reasoning part). An answer without reasoning is its
 * text alone.
 */
function answerContent(completion: Completion): JsonValue {
  if (completion.reasoning.length === 0) return completion.text;
  return [
    { type: "reasoning", text: completion.reasoning },
    ...(completion.text.length > 0 ? [{ type: "text", text: completion.text }] : []),
  ];
}

/**
 * A run's conversation as plain JSON chat messages (§7): the messages of its last model
 * request, that call's completion (reasoning, text and tool calls: see `answerContent`) and the
 * results of the tool calls it caused, in order. Without any model call, the run's inputs as user messages.
 */
export async function messageHistory(
  store: EventStore,
  options: MessageHistoryOptions,
): Promise<HistoryMessage[]> {
  // `{ sessionId, runid }` answered with the session's first run, not the one asked for.
  assertOptions(options, HISTORY_OPTIONS, "messageHistory", {
    at: "$",
    needs: "messageHistory needs { sessionId } (and optionally runId)",
  });
  const model = await loadSessionModel(store, options.sessionId);
  const run: RunRecord | undefined =
    options.runId === undefined ? model.roots[0] : model.runs.get(options.runId);
  if (!run) {
    throw new NotFoundError(`run ${options.runId} not found in session ${options.sessionId}`, {
      sessionId: options.sessionId,
      runId: options.runId,
    });
  }
  const models = run.attempts.filter((attempt) => attempt.kind === "model");
  const last = models[models.length - 1];
  if (!last) {
    return run.events
      .filter((event) => event.type === "input.received")
      .map((event) => {
        const input = isObject(event.payload) ? event.payload.input : null;
        return { role: "user", content: typeof input === "string" ? input : (input ?? null) };
      });
  }
  const request = isObject(last.requested.payload) ? last.requested.payload.request : null;
  const messages = requestMessages(request ?? null);
  if (last.status !== "completed" || !last.outcome) return messages;
  const response = (last.outcome.payload as JsonObject).response;
  const completion = completionOf(response);
  const assistant: HistoryMessage = { role: "assistant", content: answerContent(completion) };
  if (completion.toolCalls.length > 0) assistant.toolCalls = completion.toolCalls;
  messages.push(assistant);
  const completedId = last.outcome.eventId;
  for (const attempt of run.attempts) {
    if (attempt.kind !== "tool" || attempt.retriedBy !== undefined) continue;
    if (causeOf(model, attempt) !== completedId) continue;
    const requested = attempt.requested.payload as JsonObject;
    const outcome = (attempt.outcome?.payload ?? {}) as JsonObject;
    const message: HistoryMessage = {
      role: "tool",
      content:
        attempt.status === "completed"
          ? (toolResultOf(outcome.result) ?? null)
          : attempt.status === "failed"
            ? `error: ${textOf(isObject(outcome.error) ? (outcome.error.message ?? "") : "")}`
            : attempt.status === "abandoned"
              ? `abandoned: ${String(outcome.reason ?? "")}`
              : "pending: no result recorded (unresolved)",
    };
    if (typeof requested.toolCallId === "string") message.toolCallId = requested.toolCallId;
    if (typeof requested.name === "string") message.name = requested.name;
    messages.push(message);
  }
  return messages;
}
