import { isJsonObject, type JsonObject, type LedgerEvent } from "@agent-ledger/core";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { ModelMessage, ToolApprovalResponse, ToolCallPart } from "ai";
import type { AdapterState } from "./adapter-state.js";
import { toJsonValue } from "./plain-json.js";
import { effectOf } from "./wrap-tools-options.js";

// A call a person denied at its approval request (a `tool-approval-response` with `approved:
// false`) never runs: the SDK gives the model `execution-denied` as its result in the next
// generateText / streamText (a turn of its own), and calls no tool the wrapper could see. Left
// so, the ledger would hold the call without a result, and a restore of the turn that asked
// would offer its approval again, as if nobody had answered. The denial is recorded as what §3
// has for a call a person decided will never complete: its `tool.requested` (with the effect
// `wrapTools` declares for the tool) and its `attempt.abandoned` with the person's reason, in
// one append. The abandonment's metadata says it is a denial (`aiSdk.approvalDenied`), so a
// restore gives the model's `execution-denied` back. It is recorded before anything else of
// the turn: before the approved calls answered in the same message, which the SDK runs before
// its first model call (their wrapper finds the denials in the messages it is given, so a
// crash inside one leaves the denial recorded), else before the first model call, whose prompt
// carries it.

/** The abandonment's `aiSdk` field saying it records a denial: `{ reasonGiven }`. */
export const APPROVAL_DENIED_FIELD = "approvalDenied";

/** A denial the SDK put in a model call's prompt: the call, and the person's reason if any. */
interface Denial {
  toolCallId: string;
  toolName: string;
  input: unknown;
  reason: string | undefined;
}

/**
 * The denials a model call's prompt carries from its caller: `execution-denied` results in the
 * prompt's last message, where the SDK puts them (merged with the caller's own tool message)
 * before the first step of a call given approval responses. A later step's last message holds
 * the results of the tools it ran. The denial of a call the provider executes is the
 * provider's to read (no call of the app, no `tool.*` event): left out.
 */
function deniedCallsOf(prompt: LanguageModelV3Prompt): Denial[] {
  const last = prompt.at(-1);
  if (last?.role !== "tool") return [];
  const denials = last.content.flatMap((part) =>
    part.type === "tool-result" && part.output.type === "execution-denied"
      ? [{ part, reason: part.output.reason }]
      : [],
  );
  if (denials.length === 0) return [];
  // The call each answers: the last assistant tool call of its id (providers reuse ids).
  const calls = new Map<string, { input: unknown; providerExecuted?: boolean }>();
  for (const message of prompt)
    if (message.role === "assistant")
      for (const part of message.content)
        if (part.type === "tool-call") calls.set(part.toolCallId, part);
  return denials.flatMap(({ part, reason }) => {
    const call = calls.get(part.toolCallId);
    if (call === undefined || call.providerExecuted === true) return [];
    return [{ toolCallId: part.toolCallId, toolName: part.toolName, input: call.input, reason }];
  });
}

/** The completion of this run that asked for `toolCallId`, if it asked in this run. */
async function askedIn(state: AdapterState, toolCallId: string): Promise<string | undefined> {
  try {
    return await state.causes.of(toolCallId);
  } catch {
    // Its model call failed: no completion asked for it in this run.
    return undefined;
  }
}

const DENIED_PREFIX = "denied at its approval request: ";

/** What `attempt.abandoned` says of a denial: the person's reason, when they gave one. */
function reasonOf(denial: Denial): string {
  return denial.reason === undefined
    ? "denied at its approval request (no reason given)"
    : `${DENIED_PREFIX}${denial.reason}`;
}

/**
 * Records the denial: the call's request and its abandonment, in one append
 * (`declineToolCall`), so that no reader finds a call that never ran in flight. The request
 * says what `wrapTools` declares for the tool (its effect, `toolType`), as the call's would
 * have; a tool not given through `wrapTools` with this recorder has the default effect
 * (`unknown`). On a resumed run the ledger answers a denial it holds; a request it holds alone
 * (written by a version that recorded a denial in two appends, cut off between them) is
 * abandoned now: the denial stands, the call never ran.
 */
async function recordDenial(state: AdapterState, denial: Denial, causedByEventId?: string) {
  await state.ensureStarted();
  const declared = state.toolOptions.get(denial.toolName);
  const metadata: JsonObject = {
    aiSdk: { [APPROVAL_DENIED_FIELD]: { reasonGiven: denial.reason !== undefined } },
  };
  await state.recorder.declineToolCall(
    {
      toolCallId: denial.toolCallId,
      name: denial.toolName,
      args: toJsonValue(denial.input, "$.args"),
      ...(declared !== undefined ? { effect: effectOf(declared, denial.toolName) } : {}),
      ...(causedByEventId !== undefined ? { causedByEventId } : {}),
      ...(declared?.toolType !== undefined ? { metadata: { toolType: declared.toolType } } : {}),
    },
    reasonOf(denial),
    { metadata },
  );
}

/**
 * Records `denials`, each once per run, in their order: the SDK's retry of the model call, a
 * later call given the same messages, and the approved calls the SDK runs at once beside them
 * (`Promise.all`) carry them too. A denial being recorded is awaited, not recorded again; one
 * that could not be recorded is tried again by the next call that carries it.
 */
async function recordDenials(state: AdapterState, denials: Denial[]): Promise<void> {
  for (const denial of denials) {
    // A call this run's own completion asked for is caused by it (a chat continued on the same
    // recorder); one a turn before asked for opens this run, as an approved call does.
    const causedByEventId = await askedIn(state, denial.toolCallId);
    const key = `${causedByEventId ?? ""}\u0000${denial.toolCallId}`;
    let recorded = state.deniedApprovals.get(key);
    if (recorded === undefined) {
      recorded = recordDenial(state, denial, causedByEventId);
      state.deniedApprovals.set(key, recorded);
      recorded.catch(() => state.deniedApprovals.delete(key));
    }
    await recorded;
  }
}

/**
 * Records the denials the model call's `prompt` carries (see `deniedCallsOf`), unless the
 * approved calls answered beside them have (`recordDeniedBeside`). Before the call's
 * `model.requested`; if one cannot be recorded, the call is not made.
 */
export async function recordDeniedApprovals(
  state: AdapterState,
  prompt: LanguageModelV3Prompt,
): Promise<void> {
  await recordDenials(state, deniedCallsOf(prompt));
}

/**
 * The denials among the approval responses of `messages`' last message, as the SDK collects
 * them before its first step (`collectToolApprovals`): each response with `approved: false`
 * to a request of the messages, for a call of the app's (not the provider's) that the last
 * message gives no result. The SDK runs the approved ones there, handing each tool these very
 * messages; a later step's messages end with the SDK's own tool message, which holds none.
 */
function deniedResponsesOf(messages: readonly ModelMessage[]): Denial[] {
  const last = messages.at(-1);
  if (last?.role !== "tool") return [];
  const responses = last.content.filter(
    (part): part is ToolApprovalResponse => part.type === "tool-approval-response",
  );
  if (!responses.some((response) => !response.approved)) return [];
  const calls = new Map<string, ToolCallPart>();
  const requests = new Map<string, string>();
  for (const message of messages)
    if (message.role === "assistant" && typeof message.content !== "string")
      for (const part of message.content)
        if (part.type === "tool-call") calls.set(part.toolCallId, part);
        else if (part.type === "tool-approval-request")
          requests.set(part.approvalId, part.toolCallId);
  const answered = new Set(
    last.content.flatMap((part) => (part.type === "tool-result" ? [part.toolCallId] : [])),
  );
  // A call's first response is its answer, as the SDK takes it (approved, or denied).
  const collected = new Set<string>();
  const denials: Denial[] = [];
  for (const response of responses) {
    const toolCallId = requests.get(response.approvalId);
    const call = toolCallId === undefined ? undefined : calls.get(toolCallId);
    if (call === undefined || answered.has(call.toolCallId) || collected.has(call.toolCallId))
      continue;
    collected.add(call.toolCallId);
    if (response.approved || call.providerExecuted === true) continue;
    denials.push({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: call.input,
      reason: response.reason,
    });
  }
  return denials;
}

/**
 * Records the denials answered in the same message as the approved call a wrapped tool is
 * about to run (see `deniedResponsesOf`): the SDK runs approved calls before its first model
 * call, whose prompt carries the denials, so a crash inside one would leave them unrecorded,
 * and a restore would offer their approval again. Once per run (`recordDenials`): the first
 * model call then finds them recorded.
 */
export async function recordDeniedBeside(
  state: AdapterState,
  messages: readonly ModelMessage[] | undefined,
): Promise<void> {
  if (messages === undefined) return;
  const denials = deniedResponsesOf(messages);
  if (denials.length > 0) await recordDenials(state, denials);
}

/**
 * The result the SDK gave the model for a call whose recorded outcome is `ended`, if that
 * outcome records a person's denial: `execution-denied`, with the person's reason if they gave
 * one (recorded as the abandonment's reason, `reasonOf`).
 */
export function deniedOutput(ended: LedgerEvent): JsonObject | undefined {
  if (ended.type !== "attempt.abandoned") return undefined;
  const aiSdk = ended.metadata?.aiSdk;
  const denial = isJsonObject(aiSdk) ? aiSdk[APPROVAL_DENIED_FIELD] : undefined;
  if (!isJsonObject(denial)) return undefined;
  const reason = isJsonObject(ended.payload) ? ended.payload.reason : undefined;
  return denial.reasonGiven === true &&
    typeof reason === "string" &&
    reason.startsWith(DENIED_PREFIX)
    ? { type: "execution-denied", reason: reason.slice(DENIED_PREFIX.length) }
    : { type: "execution-denied" };
}
