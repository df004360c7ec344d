import { type Attempt, InvalidArgumentError, type SessionRecorder } from "@agent-ledger/core";

interface Deferred {
  promise: Promise<string>;
  resolve: (eventId: string) => void;
  reject: (error: unknown) => void;
  settled: boolean;
}

function deferred(): Deferred {
  const entry = { settled: false } as Deferred;
  entry.promise = new Promise<string>((onResolve, onReject) => {
    entry.resolve = (eventId) => {
      entry.settled = true;
      onResolve(eventId);
    };
    entry.reject = (error) => {
      entry.settled = true;
      onReject(error);
    };
  });
  // A model failure with no tool waiting for it must not become an unhandled rejection.
  entry.promise.catch(() => undefined);
  return entry;
}

/**
 * What the middleware and the tool wrapper of one recorder share: which completion asked for
 * each tool call, the model calls in flight and those that failed (to recognise the SDK's
 * retries), and the error that stops the run (a tool's request could not be committed, or was
 * unresolved): the SDK turns a tool error into a tool-error part and goes on, so the next model
 * call must be refused.
 */
export class AdapterState {
  readonly recorder: SessionRecorder;
  #blocked: unknown;
  #started: Promise<unknown> | undefined;
  readonly #causes = new Map<string, Deferred>();
  /** Model attempts begun and not yet answered. */
  readonly #inFlight = new Set<Attempt>();
  /** Failed model attempts the SDK may still retry, oldest first. */
  #failed: Attempt[] = [];
  /** The agent's language model call in flight: claimed, then its attempt once begun. */
  #agentCall: Attempt | "claimed" | undefined;

  constructor(recorder: SessionRecorder) {
    this.recorder = recorder;
  }

  /**
   * The failed attempt that a call with this request retries, taken off the list, if any
   * (`sameRequest` compares a failed attempt's request with this call's). The SDK retries a
   * call with the same request once its failure is known; parallel calls (an `embedMany` in
   * chunks) may begin and end in between, so the failure is found by its request, not as the
   * last call. (Two agents running on one recorder are refused instead, by `claimAgentCall`;
   * calls made inside tools are on the tools' child runs.) A failure stays a candidate while
   * other calls are in flight; once none is, a call that retries none of them means they were
   * not retried.
   */
  takeRetried(sameRequest: (failed: Attempt) => boolean): Attempt | undefined {
    // Comparing hashes a long conversation: only when a failed call may be retried.
    if (this.#failed.length === 0) return undefined;
    const index = this.#failed.findIndex(sameRequest);
    if (index >= 0) return this.#failed.splice(index, 1)[0];
    if (this.#inFlight.size === 0) this.#failed = [];
    return undefined;
  }

  /**
   * Claims the run for an agent's language model call (one made outside a wrapped tool), before
   * anything is recorded. An agent makes one call at a time (the SDK's retries follow its
   * failure): another still in flight is a second agent on this recorder, which replay could
   * not tell apart from the first, so it is refused here rather than replayed wrong on resume.
   */
  claimAgentCall(): void {
    if (this.#agentCall !== undefined)
      throw new InvalidArgumentError(
        "$.recorder",
        `a model call started on run ${this.recorder.runId} while another of its calls was in flight: two agents (or two generateText / streamText calls) are running at the same time on one recorder, and a resumed run replays its calls in the order they were recorded, so it could not tell them apart. Give each concurrent agent its own recorder: recorder.child({ actor }) or its own run`,
      );
    this.#agentCall = "claimed";
  }

  /** The claimed agent call began as `attempt` (or, `undefined`, could not begin). */
  agentCallBegan(attempt: Attempt | undefined): void {
    this.#agentCall = attempt;
  }

  /** A model call began (its request is durable, or it is answered from the ledger). */
  modelBegan(attempt: Attempt): void {
    this.#inFlight.add(attempt);
  }

  /** A model call was answered: completed, or its completion could not be recorded. */
  modelAnswered(attempt: Attempt): void {
    this.#inFlight.delete(attempt);
    if (this.#agentCall === attempt) this.#agentCall = undefined;
  }

  /** A model call failed (live, or answered with its recorded failure): the SDK may retry it. */
  modelFailed(attempt: Attempt): void {
    if (this.#agentCall === attempt) this.#agentCall = undefined;
    if (!this.#inFlight.delete(attempt)) return;
    this.#failed.push(attempt);
  }

  /** Throws the error that stopped this run, if any. */
  assertOpen(): void {
    if (this.#blocked !== undefined) throw this.#blocked;
  }

  get blocked(): unknown {
    return this.#blocked;
  }

  block(error: unknown): void {
    if (this.#blocked === undefined) this.#blocked = error;
  }

  /** Records `run.started` once (a no-op on a resumed run). */
  ensureStarted(): Promise<unknown> {
    if (!this.#started) {
      this.#started = this.recorder.startRun().catch((error: unknown) => {
        this.#started = undefined;
        throw error;
      });
    }
    return this.#started;
  }

  // A settled entry belongs to an earlier response: some providers reuse tool call ids on
  // every step (call_0...), so a new response announcing the id starts a new entry.
  #cause(toolCallId: string): Deferred {
    let entry = this.#causes.get(toolCallId);
    if (!entry || entry.settled) {
      entry = deferred();
      this.#causes.set(toolCallId, entry);
    }
    return entry;
  }

  /** A streamed tool call arrived: its tool waits until the completion is committed. */
  expectCause(toolCallId: string): void {
    this.#cause(toolCallId);
  }

  resolveCauses(toolCallIds: readonly string[], eventId: string): void {
    for (const id of toolCallIds) this.#cause(id).resolve(eventId);
  }

  rejectCauses(toolCallIds: readonly string[], error: unknown): void {
    for (const id of toolCallIds) this.#cause(id).reject(error);
  }

  /** The eventId of the model completion that asked for this tool call, if the middleware saw it. */
  causeOf(toolCallId: string | undefined): Promise<string> | undefined {
    if (toolCallId === undefined) return undefined;
    return this.#causes.get(toolCallId)?.promise;
  }
}

const states = new WeakMap<SessionRecorder, AdapterState>();

/** The state shared by `ledgerMiddleware` and `wrapTools` for one recorder. */
export function adapterStateOf(recorder: SessionRecorder): AdapterState {
  let state = states.get(recorder);
  if (!state) {
    state = new AdapterState(recorder);
    states.set(recorder, state);
  }
  return state;
}
