import type {
  Attempt,
  JsonObject,
  JsonValue,
  SessionRecorder,
  ToolEffect,
} from "@agent-ledger/core";
import { OtherRunCalls } from "./other-run-calls.js";
import { beforeToolCall } from "./tool-attempt.js";
import { ToolCauses } from "./tool-causes.js";
import { ToolClaims } from "./tool-claim.js";

/** What a handler knows of the tool calls of its run, shared with its ledgerMiddleware. */
export class ToolCallBook {
  /** Which model completion asked for each tool call. */
  readonly causes = new ToolCauses();
  /** The calls ledgerMiddleware records itself. */
  readonly claims = new ToolClaims();
  /** The calls that other runs of the session hold (read once, when first needed). */
  readonly otherRuns = new OtherRunCalls();
}

/** A tool call about to run, as the handler or ledgerMiddleware records it. */
export interface ToolCallToRecord {
  name: string;
  args: JsonValue;
  effect: ToolEffect;
  toolCallId: string | undefined;
  /** The LangGraph thread it runs in, if any. */
  threadId: string | undefined;
  /**
   * Made inside another tool call (a nested call): that call's `tool.requested` eventId, what
   * it is caused by (`null` when not known). Undefined for a call a model asked for.
   */
  outerRequestedEventId?: string | null;
  metadata: JsonObject;
}

/**
 * Records a tool call's request (`recorder.beforeToolCall` through `beforeToolCall`), caused by
 * the model completion that asked for it (or the call it is made inside), matched on resume by
 * thread and toolCallId. A call of a thread that no model completion of this run asked for
 * comes from a checkpoint another run may have recorded it under: refused (`conflict`) if one
 * holds it, before anything is written.
 */
export async function requestToolCall(
  recorder: SessionRecorder,
  book: ToolCallBook,
  call: ToolCallToRecord,
): Promise<Attempt> {
  const { name, args, effect, toolCallId, threadId, outerRequestedEventId, metadata } = call;
  const nested = outerRequestedEventId !== undefined;
  // A call another tool makes is caused by that tool's call, not by the model completion
  // that asked for the outer one: no model asked for it, so it is in no message history.
  const cause = outerRequestedEventId ?? book.causes.causeOf(threadId, toolCallId, { name, args });
  if (!nested && cause === undefined && toolCallId !== undefined && threadId !== undefined)
    await book.otherRuns.refuseHeld(recorder, { threadId, toolCallId, name });
  return beforeToolCall(
    recorder,
    {
      name,
      args,
      effect,
      ...(toolCallId !== undefined ? { toolCallId } : {}),
      ...(cause !== undefined ? { causedByEventId: cause } : {}),
      metadata,
    },
    { nested, threadId },
  );
}
