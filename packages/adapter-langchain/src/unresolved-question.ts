import type { Attempt } from "@agent-ledger/core";

// What ledgerMiddleware asks a person about a call in flight at a crash, apart from the asking
// (LangGraph's interrupt, in unresolved-interrupt.ts): the callback handler knows the question
// when a graph pauses on it, and imports nothing of LangGraph.

/** `type` of the value `ledgerMiddleware` interrupts with (`onUnresolved: "interrupt"`). */
export const UNRESOLVED_ATTEMPT_INTERRUPT = "agent-ledger.unresolved-attempt";

/**
 * What a person is asked about a tool call in flight at a crash that may not run again: the
 * value of LangGraph's interrupt (`result.__interrupt__[i].value`), plain JSON.
 */
export interface UnresolvedAttemptQuestion {
  type: typeof UNRESOLVED_ATTEMPT_INTERRUPT;
  question: string;
  sessionId: string;
  runId: string;
  /** The LangGraph thread, null outside one. */
  threadId: string | null;
  attemptId: string;
  stepId: string;
  toolCallId: string | null;
  name: string;
  /** The tool call's arguments, as its `tool.requested` holds them. */
  args: unknown;
  /** The two answers `new Command({ resume })` may give, as text. */
  answers: { approve: string; abandon: string };
}

/**
 * A person's decision, read from the resume value. `by` names the person (the decision's actor
 * in the ledger, `{ type: "human", id: by }`; without it, `id: "langgraph-resume"`).
 */
export type UnresolvedAttemptAnswer =
  | { approve: string; by?: string }
  | { abandon: string; by?: string };

/** The interrupt value for `attempt`, refused by the ledger as in flight at a crash. */
export function unresolvedQuestion(
  attempt: Attempt,
  threadId: string | undefined,
): UnresolvedAttemptQuestion {
  const name = attempt.name ?? "tool";
  const call = `${name}${attempt.toolCallId !== undefined ? ` (${attempt.toolCallId})` : ""}`;
  return {
    type: UNRESOLVED_ATTEMPT_INTERRUPT,
    question: `${call} was in flight when the process died; did it take effect? It is not declared idempotent, so it is not run again unless you approve.${attempt.retryOf !== undefined ? ` It was run again by an approval and died again: answer with attemptId ${attempt.attemptId}.` : ""}`,
    sessionId: attempt.sessionId,
    runId: attempt.runId,
    threadId: threadId ?? null,
    attemptId: attempt.attemptId,
    stepId: attempt.stepId,
    toolCallId: attempt.toolCallId ?? null,
    name,
    args: attempt.request ?? null,
    answers: {
      approve: `{ approve: "<reason>", attemptId: "${attempt.attemptId}" }: it did not take effect and is safe to run again; the tool runs once more`,
      abandon: `{ abandon: "<reason>", attemptId: "${attempt.attemptId}" }: it took effect, or must not be repeated; the tool does not run, the model gets the reason`,
    },
  };
}
