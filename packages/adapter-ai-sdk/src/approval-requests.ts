import { childPath, InvalidArgumentError } from "@agent-ledger/core";
import { isDeepEqualData, type Tool } from "ai";

// A tool call the SDK stopped at for a person's approval (`needsApproval`) leaves no trace the
// ledger sees: the SDK makes the approval request itself, with an id of its own, after the
// model's completion, and runs nothing. What the ledger holds is the call without a result.
// These tell, from the run's tools, which such calls wait for an approval, and rebuild the
// request the SDK made, in the form its next call matches an approval response against.

/** The `tool-approval-request` part the SDK puts in the assistant message. */
export interface ApprovalRequestPart {
  type: "tool-approval-request";
  approvalId: string;
  toolCallId: string;
  /** The model's input, where the tool's `inputSchema` parsed it to another value. */
  inputSchemaInput?: unknown;
}

/**
 * The approvalId of the request for tool call `toolCallId` of the model completion
 * `completionEventId`. The SDK's own id was never seen by the ledger; the SDK matches a
 * response to its request by this id among the messages it is given, nothing else, so any id
 * unique there will do. This one is the same on every restore, and unique in the session
 * (providers reuse tool call ids from one step to the next, the completion's event id is not).
 */
export function approvalIdOf(completionEventId: string, toolCallId: string): string {
  return `ledger-approval-${completionEventId}-${toolCallId}`;
}

/**
 * The tool's `needsApproval` for the call, called as the SDK calls it (`this` is the tool), on
 * the messages the restore has (see `awaitedApproval`). A function that throws rejects the restore: whether the call waits for a person is then
 * unknown, and neither guess is safe to hand on (a request the SDK would refuse to take, its
 * function asked again; or a call left to the app as one that needs no approval).
 */
async function approvalNeeded(
  tool: Tool,
  input: unknown,
  options: { toolCallId: string; toolName: string; messages: unknown[] },
): Promise<boolean> {
  const { needsApproval } = tool;
  if (needsApproval == null) return false;
  if (typeof needsApproval === "boolean") return needsApproval;
  const { toolCallId, toolName } = options;
  try {
    return await needsApproval.call(tool, input as never, {
      toolCallId,
      messages: options.messages as never,
      experimental_context: undefined,
    });
  } catch (error) {
    throw new InvalidArgumentError(
      childPath(childPath("$.tools", toolName), "needsApproval"),
      `needsApproval of tool ${toolName} threw for tool call ${toolCallId}: ${error instanceof Error ? error.message : String(error)}. Whether the call waits for a person's approval is unknown, so nothing is restored: restore again once it answers.`,
      { cause: error, details: { toolName, toolCallId } },
    );
  }
}

/**
 * The approval request a call the tool never ran (no `tool.requested`) waits for, if its
 * tool's `needsApproval` says it needs one. A function is called as the SDK calls it (and the
 * SDK asks it again on its next call, denying an approved call it now says needs none): with
 * the parsed `input`, and `messages`, the conversation before the assistant message; no
 * `experimental_context`. Those messages are the recorded prompt of the model call, not the
 * SDK's own: the provider's form (content as parts, tool results as the model got them), the
 * system prompt among them only when the restore keeps it (`includeSystem`). `given` is the model's input: the SDK checks an approved call's
 * parsed input against what the schema makes of it (`inputSchemaInput`). A function that
 * throws rejects with `invalid-argument` at `$.tools.<name>.needsApproval`, its error the cause.
 */
export async function awaitedApproval(
  tool: Tool,
  call: {
    toolCallId: string;
    toolName: string;
    given: unknown;
    input: unknown;
    approvalId: string;
  },
  messages: unknown[],
): Promise<ApprovalRequestPart | undefined> {
  const { toolCallId, toolName, given, input, approvalId } = call;
  if (!(await approvalNeeded(tool, input, { toolCallId, toolName, messages }))) return undefined;
  return {
    type: "tool-approval-request",
    approvalId,
    toolCallId,
    ...(isDeepEqualData(given, input) ? {} : { inputSchemaInput: given }),
  };
}
