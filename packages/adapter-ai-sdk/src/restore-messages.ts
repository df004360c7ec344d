import {
  type EventStore,
  type JsonObject,
  type JsonValue,
  type LedgerEvent,
  readWholeRun,
  resolveEvents,
} from "@agent-ledger/core";
import type { ModelMessage } from "ai";

export interface RestoreMessagesOptions {
  sessionId: string;
  runId: string;
  /** Keep system messages (default false: pass `system` to the SDK call yourself). */
  includeSystem?: boolean;
  /**
   * Resolve blob references of content-addressed payloads (default true). `false` returns
   * messages as stored, with `{ "$ledger": ... }` markers in place of externalized content.
   */
  resolve?: boolean;
}

type Part = JsonObject & { type?: string };

function payloadOf(event: LedgerEvent): JsonObject {
  const payload = event.payload;
  return payload !== null && typeof payload === "object" && !Array.isArray(payload) ? payload : {};
}

function parseInput(input: JsonValue | undefined): unknown {
  if (typeof input !== "string") return input ?? {};
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function assistantPartsOf(content: JsonValue[]): { parts: unknown[]; toolCallIds: string[] } {
  const parts: unknown[] = [];
  const toolCallIds: string[] = [];
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
      case "tool-call":
        toolCallIds.push(String(part.toolCallId));
        parts.push({
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseInput(part.input),
          ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
          ...providerOptions,
        });
        break;
      case "tool-result": {
        // A provider-executed tool's result stays in the assistant message (the provider
        // expects it with its call), as the SDK's response messages keep it.
        const result = part.result ?? null;
        const output =
          part.isError === true
            ? { type: "error-json", value: result }
            : typeof result === "string"
              ? { type: "text", value: result }
              : { type: "json", value: result };
        parts.push({
          type: "tool-result",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output,
          ...providerOptions,
        });
        break;
      }
      default:
        // sources and approval requests are not part of the conversation sent back.
        break;
    }
  }
  return { parts, toolCallIds };
}

function toolResultOf(event: LedgerEvent, names: Map<string, string>): unknown {
  const payload = payloadOf(event);
  const toolCallId = String(payload.toolCallId);
  const toolName = names.get(toolCallId) ?? "unknown";
  let output: unknown;
  if (event.type === "tool.completed") {
    const result = payload.result ?? null;
    output =
      typeof result === "string"
        ? { type: "text", value: result }
        : { type: "json", value: result };
  } else if (event.type === "tool.failed") {
    output = { type: "error-text", value: String((payload.error as JsonObject)?.message ?? "") };
  } else {
    output = { type: "error-text", value: `abandoned: ${String(payload.reason ?? "")}` };
  }
  return { type: "tool-result", toolCallId, toolName, output };
}

/**
 * The conversation of a run as `ModelMessage[]`, to continue it in a chat app: the prompt of
 * the last model request, the assistant message of its completion, and the results of the tool
 * calls it asked for (recorded results, failures as error text).
 */
export async function restoreMessages(
  store: EventStore,
  options: RestoreMessagesOptions,
): Promise<ModelMessage[]> {
  const stored = await readWholeRun(store, {
    sessionId: options.sessionId,
    runId: options.runId,
  });
  const events = options.resolve === false ? stored : await resolveEvents(store, stored);
  const requested = events.findLast((event) => event.type === "model.requested");
  if (!requested) return [];
  const request = payloadOf(requested).request as JsonObject | undefined;
  const prompt = (request?.prompt ?? []) as JsonObject[];
  const messages = prompt.filter(
    (message) => options.includeSystem === true || message.role !== "system",
  ) as unknown as ModelMessage[];
  const completed = events.find(
    (event) => event.type === "model.completed" && event.attemptId === requested.attemptId,
  );
  if (!completed) return messages;
  const response = payloadOf(completed).response as JsonObject | undefined;
  const { parts, toolCallIds } = assistantPartsOf((response?.content ?? []) as JsonValue[]);
  if (parts.length > 0) messages.push({ role: "assistant", content: parts } as ModelMessage);
  const names = new Map<string, string>();
  for (const item of (response?.content ?? []) as Part[])
    if (item.type === "tool-call") names.set(String(item.toolCallId), String(item.toolName));
  const results: unknown[] = [];
  for (const toolCallId of toolCallIds) {
    // The last outcome of this call (a retry supersedes an earlier failure).
    const outcome = events.findLast(
      (event) =>
        (event.type === "tool.completed" ||
          event.type === "tool.failed" ||
          event.type === "attempt.abandoned") &&
        payloadOf(event).toolCallId === toolCallId,
    );
    if (outcome) results.push(toolResultOf(outcome, names));
  }
  if (results.length > 0) messages.push({ role: "tool", content: results } as ModelMessage);
  return messages;
}
