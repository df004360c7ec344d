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

/** The ToolMessages of a chat model's prompt that answer a tool call by its id. */
function answeringMessages(messages: readonly BaseMessage[][]): ToolMessage[] {
  const answers: ToolMessage[] = [];
  for (const prompt of messages)
    for (const message of prompt)
      if (ToolMessage.isInstance(message) && message.tool_call_id) answers.push(message);
  return answers;
}

/** A message's text: its string content, or the text of its content's parts. */
function textOf(message: ToolMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? String(part.text) : "")).join("");
}

/**
 * Whether `message` holds the handler's refusal of `recorded`, a call with an outcome in the
 * ledger that a resume without ledgerMiddleware met again (tool-runs.ts, `refusedFinished`:
 * "tool call <name> (<id>) was already completed ..."), rather than the call's result: a tool
 * node that turns errors into ToolMessages saved it, and the model would read it as the result.
 */
function holdsRefusalOf(message: ToolMessage, recorded: RecordedAttempt): boolean {
  const name = recorded.name ?? "tool";
  return textOf(message).includes(
    `tool call ${name} (${message.tool_call_id}) was already ${recorded.status}`,
  );
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
 * A call that completed or failed before the crash, after the last checkpoint, was refused the
 * same way (the handler cannot answer it, and it must not run twice): a ToolMessage for it that
 * holds that refusal is refused too (`unresolved-attempt`, `details.status`), as the model would
 * read it as the call's outcome, until it is replaced with the outcome the ledger holds.
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
  const answers = answeringMessages(messages);
  // One handler may serve several threads, whose models may give the same ids.
  const accepts = inThread(threadId);
  for (const message of answers) {
    const toolCallId = message.tool_call_id;
    const undecided = undecidedToolCall(replay, toolCallId, accepts);
    if (undecided) throw undecided;
    const approved = replay
      .unmatchedTools({ toolCallId })
      .find(
        (recorded) =>
          recorded.status === "requested" && recorded.approved && (accepts?.(recorded) ?? true),
      );
    if (approved) throw approvedButAnswered(recorder.store, approved, toolCallId);
    const finished = replay
      .unmatchedTools({ toolCallId })
      .find(
        (recorded) =>
          (recorded.status === "completed" || recorded.status === "failed") &&
          (accepts?.(recorded) ?? true) &&
          holdsRefusalOf(message, recorded),
      );
    if (finished) throw finishedButRefused(recorder.store, finished, toolCallId);
  }
}

/**
 * The refusal of a model call whose prompt answers `recorded`, which has its outcome in the
 * ledger, with the handler's refusal of it instead of that outcome.
 */
function finishedButRefused(store: EventStore, recorded: RecordedAttempt, toolCallId: string) {
  const attempt = attemptFromRecorded(recorded);
  const name = recorded.name ?? "tool";
  const sessionId = recorded.requested.sessionId;
  return new UnresolvedAttemptError(
    `tool call ${name} (${toolCallId}) was already ${recorded.status} before a resume without ledgerMiddleware met it again; the handler refused to run it twice, and LangGraph saved that refusal as the call's ToolMessage, which the model would now read as its ${recorded.status === "completed" ? "result" : "failure"}. The ledger holds its ${recorded.status === "completed" ? "result" : "error"} (attempt ${attempt.attemptId}: ${ledgerCommand(store, "inspect", [sessionId])}, or restoreMessages' toolMessages). Replace that ToolMessage in the thread's state with it, with the same id: graph.updateState(config, { messages: [new ToolMessage({ id, tool_call_id: "${toolCallId}", content: <its ${recorded.status === "completed" ? "result" : "error"}> })] }, "tools"). Then resume, with ledgerMiddleware.`,
    {
      attemptId: attempt.attemptId,
      stepId: attempt.stepId,
      toolCallId,
      name,
      seq: attempt.seq,
      status: recorded.status,
    },
    attempt,
  );
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
