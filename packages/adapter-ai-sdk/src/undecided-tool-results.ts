import { type SessionRecorder, undecidedToolCall } from "@agent-ledger/core";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";

/**
 * Refuses, on a resumed run, a model call whose prompt carries a tool result (a `tool`
 * message's `tool-result` part) for a tool call the ledger holds in flight at the crash and
 * undecided: with the `unresolved-attempt` its wrapped tool would have thrown (see
 * `undecidedToolCall`). The tool ran unwrapped (`wrapTools` forgotten): its effect may have
 * happened twice, and the run must not go on past it as if decided. A result for a tool call
 * the ledger holds ended, abandoned or approved, or one a wrapped tool met again, goes through.
 */
export function refuseUndecidedToolResults(
  recorder: SessionRecorder,
  prompt: LanguageModelV3Prompt,
): void {
  const replay = recorder.replay;
  if (!replay) return;
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type !== "tool-result") continue;
      const undecided = undecidedToolCall(replay, part.toolCallId);
      if (undecided) throw undecided;
    }
  }
}
