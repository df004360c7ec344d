import { type Attempt, LedgerError, type SessionRecorder } from "@agent-ledger/core";
import { type AgentCallClaim, AgentCallClaims, type StreamWait } from "./agent-call-claim.js";
import { claimAgentCall, OPEN_STREAM_WAIT_MS } from "./claim-agent-call.js";
import { OpenStreams } from "./open-streams.js";
import { ToolCallCauses } from "./tool-call-causes.js";
import type { ToolCallback } from "./tool-callback-context.js";
import type { ToolOptions } from "./wrap-tools-options.js";

/** The code of the process warning for a model outcome lost to a run closed under it. */
export const OUTCOME_LOST_WARNING = "AGENT_LEDGER_OUTCOME_LOST";

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
  /** The first model outcome that could not be recorded (see `outcomeLost`). */
  #lostOutcome: { error: unknown } | undefined;
  #started: Promise<unknown> | undefined;
  /**
   * Which completion asked for each tool call (see `ToolCallCauses`): the middleware settles a
   * call's cause as its completion is recorded or fails, and the tool wrapper awaits it. No
   * other state of the run depends on it, so both use it directly.
   */
  readonly causes = new ToolCallCauses();
  /** Model attempts begun and not yet answered. */
  readonly #inFlight = new Set<Attempt>();
  /** Failed model attempts the SDK may still retry, oldest first. */
  #failed: Attempt[] = [];
  /** The agent's language model call in flight (see `AgentCallClaims`). */
  readonly #agentCalls = new AgentCallClaims();
  /** The streams handed to their consumer whose outcome is not recorded yet. */
  readonly #openStreams = new OpenStreams();
  /** The calls made on this run whose outcome is not recorded yet (see `callBegan`). */
  readonly #calls = new Set<Promise<void>>();
  /**
   * Child runs of tool calls that close once their calls settle (see `closeLater`), each with
   * the state of the child run it closes.
   */
  readonly #closing = new Map<Promise<void>, AdapterState>();
  /** Wrapped tool calls made on this run, begun live, whose outcome is not recorded yet. */
  readonly #toolsInFlight = new Set<Attempt>();
  /** The first error a child run closed later met (see `closeLater`). */
  #closeFailure: { error: unknown } | undefined;
  /** A wrapped tool call's child run (see `ofToolCall`). */
  #toolCallRun = false;
  /**
   * The state of the recorder `wrapTools` declared the tools with (`toolOptions`,
   * `inputCallbackTools`): this one, or for a tool call's child run its recorder's (see
   * `ofToolCall`).
   */
  #declaredOn: AdapterState = this;
  readonly #inputCallbackTools = new Set<string>();
  readonly #toolOptions = new Map<string, ToolOptions>();
  /**
   * The denials of approval requests recorded (or being recorded) on this run, by the
   * completion that asked (none for an earlier turn's) and toolCallId: a retry of the call that
   * carries them, or an approved call run beside them, records none again (see
   * `recordDenials`).
   */
  readonly deniedApprovals = new Map<string, Promise<void>>();

  /**
   * The tools `wrapTools` wrapped for this recorder that have an `onInputStart` or
   * `onInputDelta`: a stream's completion keeps the tool input parts of their calls alone (see
   * `RecordedModelResponse.toolInputs`), the only ones a replay must emit again.
   */
  get inputCallbackTools(): Set<string> {
    return this.#declaredOn.#inputCallbackTools;
  }

  /**
   * How `wrapTools` records each of its tools' calls (effect, idempotent, toolType), by tool
   * name: a denial of a call of the tool, which no wrapper sees, is recorded with the same.
   */
  get toolOptions(): Map<string, ToolOptions> {
    return this.#declaredOn.#toolOptions;
  }

  constructor(recorder: SessionRecorder) {
    this.recorder = recorder;
    // Closing the run (completeRun right after a break out of fullStream) waits for the streams
    // the SDK reads on, so their outcomes land before the run takes no more events.
    recorder.guardClose(() => this.#openStreams.readOn(OPEN_STREAM_WAIT_MS));
  }

  /**
   * Marks this state as a wrapped tool call's child run (see `ToolCallContext`). A tool may
   * start its inner calls together (`Promise.all`): their requests commit in whichever order
   * the event loop gives, and a resumed tool may start them in another, so a resumed child run
   * matches each call with the recorded call of the same request not yet answered (the core's
   * `matchModelsByRequest`), in recorded order first, instead of strictly in recorded order.
   * And a call the ledger refuses stops the child run (`refused`).
   *
   * `root` is the state of the recorder whose wrapped tool made it: a sub-agent run in the tool
   * calls the tools `wrapTools` wrapped for that recorder, and what it was told of them holds
   * on the child run too (a denial's effect, the input parts a stream keeps), declared before
   * the call or during it.
   */
  ofToolCall(root: AdapterState): void {
    this.#toolCallRun = true;
    this.#declaredOn = root;
  }

  /**
   * A call of this run could not begin: on a tool call's child run, an error of the ledger (a
   * store down, a replay divergence...) stops the run, so the tool's outcome is not recorded
   * as that error (it would be answered with it on every resume) and the agent's next call is
   * refused. A request that is not plain JSON is the call's own error: the tool may go on.
   */
  refused(error: unknown): void {
    if (!this.#toolCallRun || !LedgerError.isInstance(error)) return;
    if (LedgerError.isInstance(error, "non-serializable")) return;
    if (LedgerError.isInstance(error, "invalid-argument")) return;
    this.block(error);
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
   * Claims the run for an agent's language model call (see `claimAgentCall`); `abortSignal`,
   * the call's, stops a wait for a stream; `callback`, the wrapped tool callback the call is
   * made in, if it is.
   */
  claimAgentCall(abortSignal?: AbortSignal, callback?: ToolCallback): Promise<AgentCallClaim> {
    return claimAgentCall({
      claims: this.#agentCalls,
      streams: this.#openStreams,
      runId: this.recorder.runId,
      abortSignal,
      callback,
    });
  }

  /** A wrapped `onInputAvailable` / `needsApproval` of tool call `toolCallId` begins (see `AgentCallClaims`). */
  toolCallbackEntered(toolCallId: string): void {
    this.#agentCalls.toolCallbackEntered(toolCallId);
  }

  /** The claimed agent call began as `attempt` (or, `undefined`, could not begin). */
  agentCallBegan(claim: AgentCallClaim, attempt: Attempt | undefined): void {
    this.#agentCalls.began(claim, attempt);
  }

  /**
   * The stream of `attempt` (a call of `kind`) is handed to its consumer: in flight until its
   * end is recorded. `abandon` records it as failed if it is still open when its run must close
   * (a tool's child run, see `abandonOpenStreams`); `settled` resolves once its outcome is
   * recorded.
   */
  streamOpened(
    attempt: Attempt,
    kind: string,
    abandon: (reason: string) => Promise<void>,
    settled: Promise<unknown>,
  ): void {
    this.#openStreams.opened(attempt, { kind, abandon, settled });
    // A stream ended right after a tool-call part no longer waits there.
    void settled.finally(() => this.#agentCalls.streamWaits(attempt, undefined));
    this.track(settled);
  }

  /** The consumer of the open stream of `attempt` asked for its next part. */
  streamPulled(attempt: Attempt): void {
    this.#openStreams.pulled(attempt);
    this.#agentCalls.streamWaits(attempt, undefined);
  }

  /**
   * The open stream of `attempt` passed on `part`. After a tool-call part, or a tool input part
   * (`toolName`: the tool its `tool-input-start` named), until it is read again, a call the
   * SDK's callbacks make for that part is the agent's own (see `AgentCallClaims`).
   */
  streamPassedOn(
    attempt: Attempt,
    part: { type: string; id?: string; toolCallId?: string; toolName?: string },
    toolName?: string,
  ): void {
    this.#openStreams.passedOn(attempt);
    let wait: StreamWait | undefined;
    if (part.type === "tool-call" && part.toolCallId !== undefined)
      wait = {
        at: "tool-call",
        toolCallId: part.toolCallId,
        toolName: part.toolName ?? "",
        callbacksEntered: false,
      };
    else if (
      (part.type === "tool-input-start" || part.type === "tool-input-delta") &&
      part.id !== undefined
    )
      wait = { at: "tool-input", toolCallId: part.id, toolName };
    if (wait) this.#agentCalls.streamWaits(attempt, wait);
  }

  /**
   * Resolves once every stream of this run handed to its consumer has its outcome recorded
   * (see `innerCallsSettled`), and rejects if a model outcome of the run could not be
   * (`outcomeLost`); `openStreams` names those still open.
   */
  async streamsSettled(): Promise<void> {
    await this.#openStreams.settled();
    if (this.#lostOutcome) throw this.#lostOutcome.error;
  }

  get openStreams(): Attempt[] {
    return this.#openStreams.attempts;
  }

  /**
   * A call (a model call, a wrapped tool's) is made on this run: it is in flight until the
   * returned function is called, once its outcome is recorded (or could not be).
   */
  callBegan(): () => void {
    let ended!: () => void;
    const call = new Promise<void>((resolve) => {
      ended = () => {
        this.#calls.delete(call);
        resolve();
      };
    });
    this.#calls.add(call);
    return ended;
  }

  /**
   * `call` (the promise of a call made on this run) is in flight until it settles; returned
   * as given. Its first reaction ends it: whoever awaits `call` hears of it after that.
   */
  track<T>(call: Promise<T>): Promise<T> {
    const ended = this.callBegan();
    call.then(ended, ended);
    return call;
  }

  /** True while a call made on this run has no outcome recorded (see `callBegan`). */
  get callsInFlight(): boolean {
    return this.#calls.size > 0;
  }

  /** Resolves once no call made on this run is in flight, those that begin meanwhile too. */
  async callsSettled(): Promise<void> {
    while (this.#calls.size > 0) await Promise.all(this.#calls);
  }

  /**
   * `close`, the child run of `inner` closing once its calls settle, runs in the background:
   * `innerCallsSettled` waits for it, and rejects with the first error such a close met.
   */
  closeLater(inner: AdapterState, close: Promise<void>): void {
    const entry: Promise<void> = close.then(
      () => {
        this.#closing.delete(entry);
      },
      (error: unknown) => {
        this.#closing.delete(entry);
        this.#closeFailure ??= { error };
      },
    );
    this.#closing.set(entry, inner);
  }

  /** See `innerCallsSettled`. */
  async closesSettled(): Promise<void> {
    while (this.#closing.size > 0) await Promise.all(this.#closing.keys());
    if (this.#closeFailure) throw this.#closeFailure.error;
  }

  /**
   * What `closesSettled` still waits for: the child runs whose close is pending, and the calls
   * in flight on them (their requests committed, their outcomes not yet); and the first error a
   * close met, if one did.
   */
  get closesPending(): { runIds: string[]; inFlight: Attempt[]; failure: unknown } {
    const inners = [...this.#closing.values()];
    return {
      runIds: inners.map((inner) => inner.recorder.runId),
      inFlight: inners.flatMap((inner) => [...inner.#inFlight, ...inner.#toolsInFlight]),
      failure: this.#closeFailure?.error,
    };
  }

  /** A wrapped tool's call began live on this run as `attempt`: in flight until the returned function is called. */
  toolBegan(attempt: Attempt): () => void {
    this.#toolsInFlight.add(attempt);
    return () => this.#toolsInFlight.delete(attempt);
  }

  /**
   * Records every stream of this run still open as failed (with what it streamed, and
   * `reason`), and waits for those whose outcome is being recorded: before a tool call's child
   * run closes, no call the tool made may be left in flight on it.
   */
  async abandonOpenStreams(reason: string): Promise<void> {
    await this.#openStreams.abandonAll(reason);
  }

  /** `write`, a ledger write the run cannot go on without: if it fails, the run stops. */
  async settle<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      this.block(error);
      throw error;
    }
  }

  /** A model call began (its request is durable, or it is answered from the ledger). */
  modelBegan(attempt: Attempt): void {
    this.#inFlight.add(attempt);
  }

  /** A model call was answered: completed, or its completion could not be recorded. */
  modelAnswered(attempt: Attempt): void {
    this.#inFlight.delete(attempt);
    this.#agentCalls.ended(attempt);
  }

  /** A model call failed (live, or answered with its recorded failure): the SDK may retry it. */
  modelFailed(attempt: Attempt): void {
    this.#agentCalls.ended(attempt);
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

  /**
   * The outcome of model call `attempt` could not be recorded (the store down, or the run closed
   * under the call: by another recorder, or after the close guard stopped waiting for it):
   * the run stops, and `streamsSettled` (so `innerCallsSettled`) rejects with the first such
   * error. A run closed under the call takes no more calls, and the stream's reader may be gone
   * (a `break` out of `fullStream`): no caller may hear of it, so it is a process warning too.
   */
  outcomeLost(error: unknown, attempt: Attempt): void {
    this.block(error);
    this.#lostOutcome ??= { error };
    if (LedgerError.isInstance(error, "run-closed"))
      process.emitWarning(
        `the outcome of model call ${attempt.attemptId} could not be recorded: run ${attempt.runId} was closed while the call was in flight in this process (by another recorder or process, or after its close stopped waiting for the stream), so the ledger holds the call in flight for good; innerCallsSettled({ recorder }) rejects with this error. (${error.message})`,
        { code: OUTCOME_LOST_WARNING, type: "AgentLedgerWarning" },
      );
  }

  /**
   * Records `run.started` once (a no-op on a resumed run). Every model call awaits it before it
   * is matched: a child run adopted on resume has been read by then, so its replay is set up
   * here, before its first call.
   */
  ensureStarted(): Promise<unknown> {
    if (!this.#started) {
      this.#started = this.recorder.startRun().then(
        (started) => {
          if (this.#toolCallRun) this.recorder.replay?.matchModelsByRequest();
          return started;
        },
        (error: unknown) => {
          this.#started = undefined;
          throw error;
        },
      );
    }
    return this.#started;
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
