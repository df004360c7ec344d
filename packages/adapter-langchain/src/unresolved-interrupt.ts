import {
  type Attempt,
  InvalidArgumentError,
  isValidId,
  type JsonObject,
  LedgerError,
  type SessionRecorder,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { interrupt } from "@langchain/langgraph";
import { isRecord } from "./plain-json.js";
import { isInterrupt } from "./tool-attempt.js";
import {
  type UnresolvedAttemptAnswer,
  type UnresolvedAttemptQuestion,
  unresolvedQuestion,
} from "./unresolved-question.js";

/**
 * Asks a person about `refusal`'s attempt through LangGraph's `interrupt()`: the first time the
 * graph pauses (GraphInterrupt propagates); when the graph is resumed with
 * `new Command({ resume: answer })` the node runs again and this returns the answer.
 *
 * LangGraph hands a node that runs again every answer it consumed before, in order, then the
 * new one. So the answers are read in turn until one is for this attempt:
 * - a malformed one was refused when it was new (`invalid-argument`, nothing recorded) and is
 *   skipped; the newest answer malformed is refused now;
 * - one naming another attempt (`attemptId`) answered an earlier question of this tool call:
 *   the attempt a person approved before, whose retry was in flight at a second crash. Skipped:
 *   the next `interrupt()` asks about this attempt. A question about such a retry needs an
 *   answer naming its `attemptId`, since the first answer LangGraph hands back may be the one
 *   that approved the attempt it retries.
 *
 * Without a checkpointer LangGraph cannot pause: the refusal is thrown, saying so.
 */
export function askAboutUnresolved(
  refusal: UnresolvedAttemptError,
  threadId: string | undefined,
  onQuestion: (question: UnresolvedAttemptQuestion) => void,
): UnresolvedAttemptAnswer {
  const attempt = refusal.attempt;
  const question = unresolvedQuestion(attempt, threadId);
  onQuestion(question);
  const mustName = attempt.retryOf !== undefined;
  let malformed: InvalidArgumentError | undefined;
  for (;;) {
    let given: unknown;
    try {
      given = interruptOrRefuse(question, refusal);
    } catch (error) {
      // No answer after a malformed one: that one is the person's latest.
      if (malformed !== undefined && isInterrupt(error)) throw malformed;
      throw error;
    }
    malformed = undefined;
    let answer: ReturnType<typeof parseAnswer>;
    try {
      answer = parseAnswer(given, attempt.attemptId);
    } catch (error) {
      if (!LedgerError.isInstance(error, "invalid-argument")) throw error;
      malformed = error;
      continue;
    }
    if (answer.attemptId === attempt.attemptId || (answer.attemptId === undefined && !mustName))
      return answer.decision;
  }
}

function interruptOrRefuse(
  question: UnresolvedAttemptQuestion,
  refusal: UnresolvedAttemptError,
): unknown {
  try {
    return interrupt(question);
  } catch (error) {
    if (!isMissingCheckpointer(error)) throw error;
    throw new UnresolvedAttemptError(
      `${refusal.message} (ledgerMiddleware's onUnresolved: "interrupt" cannot ask through LangGraph's interrupt(): the agent has no checkpointer to pause and resume with. Give createAgent a checkpointer, or decide with SessionRecorder's approve/abandon or agent-ledger resolve.)`,
      refusal.details as { attemptId: string },
      refusal.attempt,
    );
  }
}

function isMissingCheckpointer(error: unknown): boolean {
  return isRecord(error) && error.lc_error_code === "MISSING_CHECKPOINTER";
}

/**
 * The person's answer: `{ approve: reason }` or `{ abandon: reason }` (a non-empty string),
 * with the `attemptId` it is for, optionally. Anything else is `invalid-argument` at `$.resume`.
 */
function parseAnswer(
  given: unknown,
  asked: string,
): { decision: UnresolvedAttemptAnswer; attemptId: string | undefined } {
  // What was given, and where it may come from: a resume with `null` hands the question the
  // answers the task was given before the crash, first among them one given to the tool's own
  // interrupt() (LangGraph matches a task's answers to its interrupts by their order).
  const refuse = (why: string) =>
    new InvalidArgumentError(
      "$.resume",
      `the answer to the question about attempt ${asked} must be { approve: "<reason>" } or { abandon: "<reason>" } (with its attemptId, optionally): ${why}, got ${preview(given)}. If the tool calls interrupt() itself, this may be the answer it was given before the crash, handed back by LangGraph: answer this question with new Command({ resume: { abandon: "<reason>", attemptId: "${asked}" } }) (or approve), or decide with agent-ledger resolve and resume`,
      { details: { attemptId: asked } },
    );
  if (!isRecord(given)) throw refuse("not an object");
  const keys = Object.keys(given);
  const extra = keys.filter((key) => !ANSWER_KEYS.has(key));
  if (extra.length > 0) throw refuse(`unknown field ${extra[0]}`);
  const { approve, abandon, attemptId, by } = given;
  if (attemptId !== undefined && typeof attemptId !== "string")
    throw refuse("attemptId is not a string");
  if (by !== undefined && !isValidId(by))
    throw refuse("by (who decided) must be a ledger id: 1-255 characters, no control characters");
  if ((approve === undefined) === (abandon === undefined))
    throw refuse("give exactly one of approve and abandon");
  const reason = approve ?? abandon;
  if (typeof reason !== "string" || reason.length === 0)
    throw refuse("the reason must be a non-empty string");
  const who = by === undefined ? {} : { by };
  return {
    decision: approve !== undefined ? { approve: reason, ...who } : { abandon: reason, ...who },
    attemptId,
  };
}

/** A given answer in a message: its JSON, cut at 80 characters. */
function preview(given: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(given) ?? String(given);
  } catch {
    text = String(given);
  }
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

const ANSWER_KEYS = new Set(["approve", "abandon", "attemptId", "by"]);

/**
 * Records the person's decision on the attempt and returns the attempt the call goes on with,
 * as a resume after a decision made elsewhere would give it: an approved attempt's retry (a new
 * attempt of its step, `retryOf` it), or the attempt answered as abandoned (`replayed`).
 */
export async function recordAnswer(
  recorder: SessionRecorder,
  attempt: Attempt,
  answer: UnresolvedAttemptAnswer,
  metadata: JsonObject,
): Promise<Attempt> {
  // Written by the agent's recorder on the person's word: the person is the decision's actor.
  const decided = {
    actor: { type: "human", id: answer.by ?? "langgraph-resume" } as const,
    metadata,
  };
  if ("abandon" in answer) {
    const { eventId } = await recorder.abandon(attempt, answer.abandon, decided);
    return { ...attempt, replayed: { status: "abandoned", reason: answer.abandon, eventId } };
  }
  await recorder.approve(attempt, answer.approve, decided);
  return await recorder.retry(attempt, { metadata });
}
