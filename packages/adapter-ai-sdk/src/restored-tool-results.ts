import type { JsonValue, LedgerEvent } from "@agent-ledger/core";
import type { ToolSet } from "ai";
import { checkedToolSet } from "./adapter-options.js";
import { deniedOutput } from "./denied-approvals.js";
import { toolNamed } from "./parsed-tool-input.js";
import { toolErrorText } from "./replayed-errors.js";
import { payloadOf } from "./tool-call-records.js";
import { decodeToolOutput } from "./tool-output.js";

// What a restored conversation gives the model for a tool's outcome, as the SDK would give it.

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
export type ModelOutputOf = (
  toolName: string,
  options: ToolOutputOptions,
  recorded: JsonValue,
) => Promise<unknown>;

export function modelOutputOf(tools: unknown): ModelOutputOf {
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

/**
 * The tool result part of an outcome, for the call the assistant message made (`input`: what
 * the tool was called with). A failure is its error's text, as the SDK gives it; an
 * abandonment, `abandoned: <reason>`, but a person's denial, the SDK's `execution-denied`.
 */
export async function toolResultOf(
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
