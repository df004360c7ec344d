import {
  type Attempt,
  isJsonObject,
  type JsonObject,
  LedgerError,
  type LedgerEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { AdapterState } from "./adapter-state.js";
import { failureMetadataOf, rebuildError } from "./replayed-errors.js";

// One model call's way through the ledger, shared by the language and the embedding
// middleware: the request before the call, then its completion or its failure.

/**
 * Commits `model.requested` for the request `requestOf` builds (a language or embedding
 * model's; built once the run has started, so a request refused as not plain JSON is refused
 * on a started run) before the call. A retry of the SDK (the same request as a call of this
 * run that failed) becomes a new attempt of that call's step, with `retryOf`. On a resumed run
 * a recorded call is answered from the ledger instead. `metadata` goes on the `model.requested`
 * (a language model call's `{ stream }`, read by the OpenTelemetry export).
 */
export async function beginAttempt(
  state: AdapterState,
  requestOf: () => JsonObject,
  metadata?: JsonObject,
): Promise<Attempt> {
  state.assertOpen();
  const { recorder } = state;
  return begun(state, async () => {
    await state.ensureStarted();
    const request = requestOf();
    const retried = state.takeRetried((failed) => recorder.sameModelRequest(failed, request));
    // On resume, `retry` answers a retry the crashed process already made from the ledger.
    const options = metadata ? { metadata } : {};
    return askedAgain(
      recorder,
      retried
        ? await recorder.retry(retried, options)
        : await recorder.beforeModelCall({ request, ...options }),
      options,
    );
  });
}

/**
 * Makes again, as a retry of it, a call the ledger answered with no vectors (an embedding
 * recorded without `recordEmbeddings`), and returns the new attempt, begun. An earlier resume's
 * retry is answered from the ledger as `beginAttempt` answers a call: one its caller aborted is
 * asked again in turn.
 */
export async function retryAttempt(state: AdapterState, answered: Attempt): Promise<Attempt> {
  return begun(state, async () => askedAgain(state.recorder, await state.recorder.retry(answered)));
}

/** The attempt `begin` makes, told to `state` as begun; a refusal told as such, and thrown. */
async function begun(state: AdapterState, begin: () => Promise<Attempt>): Promise<Attempt> {
  let attempt: Attempt;
  try {
    attempt = await begin();
  } catch (error) {
    state.refused(error);
    throw error;
  }
  state.modelBegan(attempt);
  return attempt;
}

/**
 * `attempt`, or, if its caller aborted it or its failure ended the turn, the retry of it that
 * asks the model again.
 */
async function askedAgain(
  recorder: SessionRecorder,
  attempt: Attempt,
  options: { metadata?: JsonObject } = {},
): Promise<Attempt> {
  // A call its caller aborted got no answer from the model: asked again, not its abort.
  let asked = attempt;
  for (;;) {
    if (abortedByCaller(asked)) asked = await recorder.retry(asked, options);
    else if (endedTheTurn(recorder, asked))
      // Marked, so that the turn sent once more follows the failure to this retry's answer.
      asked = await recorder.retry(asked, {
        metadata: { ...options.metadata, aiSdk: { askedAgainAfterFailure: true } },
      });
    else return asked;
  }
}

/**
 * Whether `attempt` is answered from the ledger with a failure that ended the turn: the last
 * call the run recorded (the replay has nothing left to answer after it) on a run still open,
 * or one an earlier resend asked again (its retry marked `aiSdk.askedAgainAfterFailure`).
 * The turn sent again (a chat client's resend, a resume) is the caller trying once more, as
 * the SDK's own retry would: replayed, the failure would end every resend at the same call,
 * for ever, with no provider call. A failure the SDK retried past has its retry recorded after
 * it, so it is replayed, as is the failure of a run its caller closed (`failRun`): closed, the
 * run takes no new call.
 */
function endedTheTurn(recorder: SessionRecorder, attempt: Attempt): boolean {
  if (attempt.replayed?.status !== "failed") return false;
  const replay = recorder.replay;
  if (replay === undefined) return false;
  if (recorder.status === "running" && replay.atFrontier) return true;
  // An earlier resend asked it again: its retry, after it in the ledger, is the answer. (A scan
  // of the run's model calls, made only for a failure answered from the ledger.)
  return replay.modelAttempts.some(
    (recorded) =>
      recorded.retryOf === attempt.attemptId && askedAgainAfterFailure(recorded.requested),
  );
}

/** Whether `requested` is a retry `askedAgain` made of a failure that ended the turn. */
function askedAgainAfterFailure(requested: LedgerEvent): boolean {
  const aiSdk = requested.metadata?.aiSdk;
  return isJsonObject(aiSdk) && aiSdk.askedAgainAfterFailure === true;
}

/**
 * Whether `attempt` is answered from the ledger with a failure its caller caused: the call's
 * `abortSignal` aborted (the user pressed stop, the SDK's timeout). The model gave no answer,
 * so a resumed run asks it again (a retry of it) where a replay of the abort would end the
 * resumed turn at the same call, for ever.
 */
function abortedByCaller(attempt: Attempt): boolean {
  const replayed = attempt.replayed;
  if (replayed?.status !== "failed") return false;
  const aiSdk = replayed.metadata?.aiSdk;
  return isJsonObject(aiSdk) && aiSdk.abortedByCaller === true;
}

/**
 * Records the failure (with what had arrived, `partial`) and returns the error the caller must
 * see: the call's own, or the ledger's if the failure could not be recorded (the run then
 * stops). `aborted`: the call's `abortSignal` had aborted, which its metadata keeps
 * (`aiSdk.abortedByCaller`), so that a resume asks the call again.
 */
export async function recordFailure(
  state: AdapterState,
  attempt: Attempt,
  error: unknown,
  { partial, aborted = false }: { partial?: unknown; aborted?: boolean } = {},
): Promise<unknown> {
  state.modelFailed(attempt);
  const facts = failureMetadataOf(error);
  const metadata: JsonObject | undefined = aborted
    ? { aiSdk: { ...(facts?.aiSdk as JsonObject | undefined), abortedByCaller: true } }
    : facts;
  const options = metadata ? { metadata } : {};
  try {
    try {
      await state.recorder.modelFailed(attempt, error, {
        ...options,
        ...(partial !== undefined ? { partial } : {}),
      });
    } catch (ledgerError) {
      if (partial === undefined || !LedgerError.isInstance(ledgerError, "non-serializable"))
        throw ledgerError;
      // What had arrived is not plain JSON (a provider's raw chunk holding a bigint...): the
      // failure itself still is, and recorded it keeps the call from looking in flight. Its
      // replay then fails before the stream starts.
      await state.recorder.modelFailed(attempt, error, options);
    }
    return error;
  } catch (ledgerError) {
    // The failure is not durable: fail closed, the run stops here.
    state.outcomeLost(ledgerError, attempt);
    return ledgerError;
  }
}

/**
 * Commits `model.completed` with the response `responseOf` encodes, and returns the event. A
 * response the ledger cannot hold (not plain JSON) is recorded as the call's failure instead:
 * the provider was paid, and a request left in flight would be made again on resume. The
 * caller then gets that `non-serializable` error, and the run goes on. If the ledger cannot
 * take the outcome at all, the run stops, and the caller gets the ledger's error.
 */
export async function recordCompletion(
  state: AdapterState,
  attempt: Attempt,
  responseOf: () => unknown,
): Promise<LedgerEvent> {
  try {
    const completed = await state.recorder.modelCompleted(attempt, responseOf());
    state.modelAnswered(attempt);
    return completed;
  } catch (error) {
    if (LedgerError.isInstance(error, "non-serializable"))
      throw await recordFailure(state, attempt, error);
    state.modelAnswered(attempt);
    state.outcomeLost(error, attempt);
    throw error;
  }
}

/**
 * The error a recorded failure stands for (thrown again on replay). A model call a person
 * abandoned (`recorder.abandon`; `agent-ledger resolve` refuses model calls) has no answer the
 * SDK could go on with: `replay-divergence`, as the OpenAI Agents adapter refuses it, saying
 * what to do.
 */
export function replayedFailure(state: AdapterState, attempt: Attempt): Error {
  const replayed = attempt.replayed;
  state.modelFailed(attempt);
  if (replayed?.status === "failed") return rebuildError(replayed.error, replayed.metadata);
  const reason = replayed?.status === "abandoned" ? replayed.reason : "unknown";
  const { sessionId, runId } = state.recorder;
  return new LedgerError(
    "replay-divergence",
    `model call ${attempt.attemptId} of run ${runId} was abandoned (${reason}): a model call has no result to give the model in its place, so this run cannot go on past it. A model call a crash left in flight needs no decision: a resume makes it again by itself. Close this run (recorder.failRun or recorder.cancelRun) and answer in a new run; see agent-ledger inspect ${sessionId}.`,
    { details: { attemptId: attempt.attemptId, runId, reason } },
  );
}
