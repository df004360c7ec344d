import type { JsonObject, JsonValue } from "../events/json.js";
import { argumentsObject, asContent, atifMessageOf } from "./atif-content.js";
import type { AtifObservationResult, AtifToolCall } from "./atif-types.js";
import { hostedToolCallsOf } from "./hosted-tool-calls.js";

/**
 * The tool calls the provider ran inside a completed model call (see `hostedToolCallsOf`) as
 * ATIF tool calls of that call's step, marked `extra.executed_by: "provider"` (no attempt of
 * the ledger: the agent's process made no such call), with what each gave the model as its
 * observation result when the response holds it (a failed call: its error; a generated image:
 * named, its bytes left in `completedEventId`'s payload, as `atifMessageOf` does). A call
 * without an id of its own is named after the model attempt (`{attemptId}:hosted:{n}`).
 */
export function hostedAtifCalls(
  response: JsonValue | undefined,
  attemptId: string,
  completedEventId: string,
): { calls: AtifToolCall[]; results: AtifObservationResult[] } {
  const calls: AtifToolCall[] = [];
  const results: AtifObservationResult[] = [];
  hostedToolCallsOf(response).forEach((hosted, index) => {
    const toolCallId = hosted.id ?? `${attemptId}:hosted:${index}`;
    const extra: JsonObject = { executed_by: "provider", item_type: hosted.itemType };
    if (hosted.status !== undefined) extra.status = hosted.status;
    if (hosted.serverLabel !== undefined) extra.server_label = hosted.serverLabel;
    calls.push({
      tool_call_id: toolCallId,
      function_name: hosted.name,
      arguments: argumentsObject(hosted.arguments),
      extra,
    });
    const resultExtra: JsonObject = { executed_by: "provider" };
    if (hosted.error !== undefined) resultExtra.error = hosted.error;
    if (hosted.image !== undefined) {
      const { base64, mediaType } = hosted.image;
      const part = { type: "image", image: base64, ...(mediaType ? { mediaType } : {}) };
      const { message, extra: omitted } = atifMessageOf([part], completedEventId);
      results.push({
        source_call_id: toolCallId,
        content: message,
        extra: { ...resultExtra, ...omitted },
      });
    } else if (hosted.output !== undefined || hosted.error !== undefined)
      results.push({
        source_call_id: toolCallId,
        content: asContent(hosted.output) ?? hosted.error ?? null,
        extra: resultExtra,
      });
  });
  return { calls, results };
}
