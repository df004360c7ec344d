import {
  attemptFromRecorded,
  type EventStore,
  ledgerCommand,
  type RecordedAttempt,
  type SessionRecorder,
  UnresolvedAttemptError,
  undecidedToolCall,
} from "@agent-ledger/core";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { inThread } from "./langchain-metadata.js";

/** The tool calls the ToolMessages of a chat model's prompt answer, by their ids. */
function answeredToolCalls(messages: readonly BaseMessage[][]): string[] {
  const ids: string[] = [];
  for (const prompt of messages)
    for (const message of prompt)
      if (ToolMessage.isInstance(message) && message.tool_call_id) ids.push(message.tool_call_id);
  return ids;
}

/**
 * Refuses, on a resumed run, a model call of thread `threadId` whose prompt (`messages`) carries
 * a ToolMessage for a tool call the ledger holds in flight at the
 * crash and that this run did not meet again: the tools node that made the message did not run
 * the call. That is the handler's own refusal, which a tool node without ledgerMiddleware turned
 * into the call's ToolMessage and LangGraph saved in the thread's state before the run stopped
 * (`RefusedThreads` refuses the model call after it in that invocation); a later resume does
 * not run that tools node again and hands the saved refusal to the model as the call's answer.
 * - Undecided: the `unresolved-attempt` the call was refused with.
 * - Approved by a person: it cannot run again (its tools step is over), and the model must not
 *   take the refusal for its result: `unresolved-attempt`, saying what to do instead.
 * An abandoned call goes through: the person decided, and the model reads the saved message (see
 * the README: Resuming). Nothing is read from the store: the replay's own records are looked up.
 */
export function refuseSavedRefusals(
  recorder: SessionRecorder,
  messages: readonly BaseMessage[][],
  threadId: string | undefined,
): void {
  // A live run replays nothing: its prompts are not walked.
  const replay = recorder.replay;
  if (!replay) return;
  const answered = answeredToolCalls(messages);
  // One handler may serve several threads, whose models may give the same ids.
  const accepts = inThread(threadId);
  for (const toolCallId of answered) {
    const undecided = undecidedToolCall(replay, toolCallId, accepts);
    if (undecided) throw undecided;
    const approved = replay
      .unmatchedTools({ toolCallId })
      .find(
        (recorded) =>
          recorded.status === "requested" && recorded.approved && (accepts?.(recorded) ?? true),
      );
    if (approved) throw approvedButAnswered(recorder.store, approved, toolCallId);
  }
}

/** The refusal of a model call whose prompt answers `recorded`, approved but not run again. */
function approvedButAnswered(store: EventStore, recorded: RecordedAttempt, toolCallId: string) {
  const attempt = attemptFromRecorded(recorded);
  const name = recorded.name ?? "tool";
  return new UnresolvedAttemptError(
    `tool call ${name} (${toolCallId}) was approved to run again, but it cannot run again in this thread: its tools step ended when the handler refused it (resumed without ledgerMiddleware), and LangGraph saved that refusal as the call's ToolMessage, which the model would now read as its result. Abandon attempt ${attempt.attemptId} instead (recorder.abandon(error.attempt, reason), or ${ledgerCommand(store, 'resolve --abandon "reason"', [recorded.requested.sessionId, attempt.attemptId])}); so that the model reads your reason rather than the refusal, replace that ToolMessage in the thread's state first, with the same id: graph.updateState(config, { messages: [new ToolMessage({ id, tool_call_id: "${toolCallId}", content: reason })] }, "tools"). Then resume, with ledgerMiddleware.`,
    {
      attemptId: attempt.attemptId,
      stepId: attempt.stepId,
      toolCallId,
      name,
      seq: attempt.seq,
      approved: true,
    },
    attempt,
  );
}
