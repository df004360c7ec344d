import type { JsonObject, JsonValue } from "@agent-ledger/core";
import type { ModelOutputOf } from "./restored-tool-results.js";

// The assistant message a restored conversation gives for a recorded model completion.

/** A content part as recorded. */
export type Part = JsonObject & { type?: string };

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
export async function assistantPartsOf(
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
