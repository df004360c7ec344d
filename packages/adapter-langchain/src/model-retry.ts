import {
  type Attempt,
  attemptFromRecorded,
  type JsonObject,
  type RecordedAttempt,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { Serialized } from "@langchain/core/load/serializable";

/**
 * What a model call is made by: the model's serialized form (class and constructor fields) and
 * the provider and model name LangChain names for it (`ls_provider`, `ls_model_name`). Two
 * models that send the same request (OpenAI and Azure serving one model id) differ here.
 */
export interface ModelIdentity {
  llm: Serialized;
  provider: unknown;
  modelName: unknown;
}

/** A model call as its start callback sees it: what decides whether it retries another. */
export interface StartingCall {
  parentRunId: string | undefined;
  /** The LangGraph task it is made in (see `taskOf`), if any. */
  task: string | undefined;
  request: JsonObject;
  model: ModelIdentity;
  tags: readonly string[] | undefined;
}

/** A model call in progress, as `ModelRetries.started` notes it. */
interface StartedModelCall {
  parentRunId: string | undefined;
  model: ModelIdentity;
  /** The LangGraph task it is made in (see `taskOf`), if any. */
  task: string | undefined;
  /** The thread it runs in (`threadIdOf`): `forget` drops a thread's failed tasks by it. */
  threadId: string | undefined;
  recorder: SessionRecorder;
}

/** The tag `withRetry` gives each attempt after the first (`retry:attempt:2`, ...). */
const RETRY_TAG = /^retry:attempt:\d+$/;

/** The node of createAgent's graph that calls the model (`AGENT_NODE_NAME` in langchain). */
const AGENT_MODEL_NODE = "model_request";

/**
 * Retries of model calls. LangChain's `withRetry` and createAgent's `modelRetryMiddleware` call
 * the model again after a failure, with the same request and under the same parent run (the
 * retry runnable, the model node): that call is a new attempt of the failed call's step
 * (`retryOf`, DESIGN §3), not a call of its own.
 *
 * Only those: the same request after a failure under one parent is also a fallback model
 * (`withFallbacks`, `modelFallbackMiddleware`) serving the same model id, or the next sample of
 * a `batch`, which are calls of their own. So a retry is a call that `withRetry` tags as one
 * (`retry:attempt:N`), or one that createAgent's model node makes again (only a `wrapModelCall`
 * middleware calling its handler again does), and then only of the same model (its serialized
 * form, provider and model name) with the same request.
 */
export class ModelRetries {
  /** Each model call in progress, by LangChain runId: its parent run, model, task, recorder. */
  readonly #calls = new Map<string, StartedModelCall>();
  /**
   * The last failed call of each LangGraph task, until the task's next call: LangGraph runs a
   * task again when it threw and its node has a `retryPolicy`, under a new node run.
   */
  readonly #failedTasks = new Map<string, StartedModelCall & { attempt: Attempt }>();
  /** The last failed call under each parent run, until the next call under it. */
  readonly #failed = new Map<string, { attempt: Attempt; model: ModelIdentity }>();
  /** The runs of createAgent's model node in progress. */
  readonly #modelNodes = new Set<string>();

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return {
      modelRetryCalls: this.#calls.size,
      failedTasks: this.#failedTasks.size,
      failedModelCalls: this.#failed.size,
      modelNodes: this.#modelNodes.size,
    };
  }

  /**
   * An invocation in thread `threadId` (undefined: outside one) ended: no retryPolicy runs its
   * tasks again (a later invocation reopens the recorder, and meets their failures as a resume
   * does), so their failed calls are dropped.
   */
  forget(threadId: string | undefined): void {
    for (const [task, failed] of this.#failedTasks)
      if (failed.threadId === threadId) this.#failedTasks.delete(task);
  }

  /** A chain started: a run of createAgent's model node is noted (see the class). */
  chainStarted(
    runId: string,
    runName: string | undefined,
    metadata: Record<string, unknown> | undefined,
  ) {
    if (runName === AGENT_MODEL_NODE && metadata?.langgraph_node === AGENT_MODEL_NODE)
      this.#modelNodes.add(runId);
  }

  /** The failed attempt that `call` retries, if it retries one (see the class). */
  retried(recorder: SessionRecorder, call: StartingCall): Attempt | undefined {
    const { parentRunId } = call;
    const byTask = this.#retriedTask(recorder, call);
    if (byTask) return byTask;
    if (parentRunId === undefined) return undefined;
    const failed = this.#failed.get(parentRunId);
    if (!failed) return undefined;
    this.#failed.delete(parentRunId);
    const madeAgain =
      call.tags?.some((tag) => RETRY_TAG.test(tag)) === true || this.#modelNodes.has(parentRunId);
    if (!madeAgain || !sameModel(failed.model, call.model)) return undefined;
    // Hashing a long conversation costs a pass over it: only after a failure.
    return recorder.sameModelRequest(failed.attempt, call.request) ? failed.attempt : undefined;
  }

  /**
   * The failed call of the same LangGraph task that `call` makes again from another run of the
   * node (its retryPolicy ran the task again), on the same recorder, by the same model with the
   * same request. (A call made again in the same node run is the node's own loop: a call of its
   * own.) A later invocation reopens the recorder and meets the failure as a resume does.
   */
  #retriedTask(recorder: SessionRecorder, call: StartingCall): Attempt | undefined {
    if (call.task === undefined) return undefined;
    const failed = this.#failedTasks.get(call.task);
    if (!failed) return undefined;
    this.#failedTasks.delete(call.task);
    if (
      failed.recorder !== recorder ||
      failed.parentRunId === call.parentRunId ||
      !sameModel(failed.model, call.model)
    )
      return undefined;
    return recorder.sameModelRequest(failed.attempt, call.request) ? failed.attempt : undefined;
  }

  /** A model call started (its attempt is recorded on `recorder`). */
  started(runId: string, call: StartedModelCall): void {
    this.#calls.set(runId, call);
  }

  /** A model call ended; a failed one may be retried next under its parent, or by its task. */
  ended(runId: string, failedAttempt?: Attempt): void {
    const call = this.#calls.get(runId);
    this.#calls.delete(runId);
    if (call?.task !== undefined) {
      if (failedAttempt) this.#failedTasks.set(call.task, { ...call, attempt: failedAttempt });
      else this.#failedTasks.delete(call.task);
    }
    if (call?.parentRunId === undefined) return;
    if (failedAttempt)
      this.#failed.set(call.parentRunId, { attempt: failedAttempt, model: call.model });
    else this.#failed.delete(call.parentRunId);
  }

  /** The parent run ended: no retry of its failed call can come any more. */
  parentEnded(runId: string): void {
    this.#failed.delete(runId);
    this.#modelNodes.delete(runId);
  }
}

/**
 * The LangGraph task a call is made in, from its metadata: the thread and the task's checkpoint
 * namespace (`node:<task id>`, the same id each time LangGraph runs the task again).
 */
export function taskOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const namespace = metadata?.langgraph_checkpoint_ns;
  if (typeof namespace !== "string" || namespace === "") return undefined;
  return JSON.stringify([metadata?.thread_id ?? null, namespace]);
}

/** Whether two calls are made by the same model; unsure (a value JSON cannot hold) is no. */
function sameModel(one: ModelIdentity, other: ModelIdentity): boolean {
  try {
    return JSON.stringify(one) === JSON.stringify(other);
  } catch {
    return false;
  }
}

/**
 * A new attempt of `attempt`'s call, to record a call LangChain makes whatever the ledger holds
 * (the callback cannot answer it). `recorder.retry` answers from the ledger the retries a
 * crashed process already made of it: those are moved past, so the attempt returned is live.
 */
export async function retryLive(
  recorder: SessionRecorder,
  attempt: Attempt,
  metadata: JsonObject,
): Promise<Attempt> {
  let current = await recorder.retry(attempt, { metadata });
  while (current.replayed) current = await recorder.retry(current, { metadata });
  return current;
}

/**
 * The model calls in flight at a crash (requested, no outcome) that a resumed agent replaces
 * with a call of another request: the same turn asked again with a prompt that changed (a
 * system prompt with the time, a middleware's edit...). Model calls count as idempotent (DESIGN
 * §7): the lost call is not repeated as such, so it is abandoned, not left unresolved for a
 * person. Returns the step of the last one: the new call is that turn's next attempt.
 * (A retry, `retryOf`, would say it better, but core's retry repeats the recorded request.)
 */
export async function supersedeInFlight(
  recorder: SessionRecorder,
  skipped: readonly RecordedAttempt[],
): Promise<string | undefined> {
  let stepId: string | undefined;
  for (const recorded of skipped) {
    if (recorded.kind !== "model" || recorded.status !== "requested") continue;
    await recorder.abandon(
      attemptFromRecorded(recorded),
      "in flight when the process died; the resumed agent called the model again with another request",
    );
    stepId = recorded.stepId;
  }
  return stepId;
}
