import { type JsonValue, wellFormedText } from "@agent-ledger/core";
import type { RunToolApprovalItem } from "@openai/agents";
import { approvalCallId } from "./approval-decisions.js";
import type { AwaitedCall } from "./checkpoint.js";
import { parseWellFormed, recordedOutput } from "./model-json.js";

// The arguments as the model sent them: their JSON (as recorded for a tool request), else the
// text itself. A hosted MCP approval request holds them in its provider data only.
function argumentsOf(item: RunToolApprovalItem): JsonValue | undefined {
  const raw = item.rawItem as { type?: string; providerData?: { arguments?: unknown } };
  const text =
    item.arguments ?? (raw.type === "hosted_tool_call" ? raw.providerData?.arguments : undefined);
  if (typeof text !== "string") return undefined;
  try {
    return recordedOutput(parseWellFormed(text)) as JsonValue;
  } catch {
    return wellFormedText(text);
  }
}

/**
 * The interruptions a person is asked about, as the RunState checkpoint lists them;
 * `inFlightAttempt`: the attempt a crash left in flight that an item asks about, if any
 * (`inFlightAttemptId`, for `agent-ledger inspect` to say that call may have had its effect).
 */
export function awaitedCalls(
  items: readonly RunToolApprovalItem[],
  inFlightAttempt: (item: RunToolApprovalItem) => string | undefined = () => undefined,
): AwaitedCall[] {
  return items.map((item) => {
    const call: AwaitedCall = { name: item.name ?? item.toolName ?? "" };
    const callId = approvalCallId(item);
    if (callId !== "") call.toolCallId = callId;
    const args = argumentsOf(item);
    if (args !== undefined) call.args = args;
    const agent = item.agent?.name;
    if (typeof agent === "string" && agent.length > 0) call.agent = agent;
    const attemptId = inFlightAttempt(item);
    if (attemptId !== undefined) call.inFlightAttemptId = attemptId;
    return call;
  });
}
