import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { AttemptIndex } from "./attempt-index.js";
import { InFlightClaims } from "./in-flight-claims.js";
import { MatchedPositions } from "./matched-positions.js";
import {
  collectAttempts,
  matched,
  type RecordedAttempt,
  type ReplayMatch,
} from "./recorded-attempts.js";
import { modelDivergence, retryDivergence } from "./recorded-divergence.js";
import { sameToolRequest, type ToolCallToMatch } from "./tool-call-match.js";

// Where the recorder, the decisions and the package entry have always found them.
export type { RecordedAttempt, ReplayMatch } from "./recorded-attempts.js";
export { attemptFromRecorded, collectAttempts } from "./recorded-attempts.js";
export type { ToolCallToMatch } from "./tool-call-match.js";

/** Recorded tool attempts under one toolCallId, or (without one) of one name. */
export type ToolAttemptKey =
  | { toolCallId: string; name?: never }
  | { name: string; toolCallId?: never };

/**
 * Answers calls from the ledger when a crashed run is re-executed from its input (§7). Model
 * calls are matched in order (the k-th call of the re-execution is the k-th recorded attempt),
 * or, in a run whose model calls may be made at once (`matchModelsByRequest`), by request;
 * tool calls by `toolCallId`, else by order among tool calls of the same name. Each match
 * compares the request hash: a different request is `replay-divergence`. Once the recorded
 * attempts are used up the run is live again.
 */
export class ReplayCursor {
  readonly #models: RecordedAttempt[];
  readonly #tools: RecordedAttempt[];
  readonly #inputs: LedgerEvent[];
  /** The positions in `#models` matched (or skipped). */
  readonly #matchedModels = new MatchedPositions();
  #modelsByRequest = false;
  #inputIndex = 0;
  readonly #usedTools = new Set<RecordedAttempt>();
  /**
   * The recorded tool attempts a call was matched with (`takeTool`, `takeRetry`), not those
   * skipped: what a repeat of the same call is answered with (see `takeTool`).
   */
  readonly #claimedTools = new Set<RecordedAttempt>();
  /** Those of them in flight at the crash: the causes they were asked for under, and since. */
  readonly #inFlight = new InFlightClaims();
  readonly #toolsByCallId: AttemptIndex<RecordedAttempt>;
  readonly #toolsByName: AttemptIndex<RecordedAttempt>;
  readonly #toolsByRetryOf: AttemptIndex<RecordedAttempt>;
  /** The step of every recorded tool attempt (retried ones too), by its request's eventId. */
  readonly #toolStepByRequest = new Map<string, string>();
  /** What undoes each match handed out that took a recorded attempt (see `giveBack`). */
  readonly #undo = new WeakMap<ReplayMatch, () => void>();

  constructor(events: readonly LedgerEvent[]) {
    const attempts = collectAttempts(events);
    for (const attempt of attempts)
      if (attempt.kind === "tool")
        this.#toolStepByRequest.set(attempt.requested.eventId, attempt.stepId);
    // A retried attempt is answered by its retry: the re-executing agent makes the call once.
    const retried = new Set(
      attempts.map((attempt) => attempt.retryOf).filter((id) => id !== undefined),
    );
    const live = attempts.filter(
      (attempt) => !(retried.has(attempt.attemptId) && attempt.status === "requested"),
    );
    this.#models = live.filter((attempt) => attempt.kind === "model");
    this.#tools = live.filter((attempt) => attempt.kind === "tool");
    this.#inputs = events.filter((event) => event.type === "input.received");
    this.#toolsByCallId = new AttemptIndex(this.#tools, (attempt) => attempt.toolCallId);
    this.#toolsByName = new AttemptIndex(this.#tools, (attempt) => attempt.name);
    this.#toolsByRetryOf = new AttemptIndex(this.#tools, (attempt) => attempt.retryOf);
  }

  /**
   * The step of the recorded tool attempt whose `tool.requested` is `eventId`, retried attempts
   * included (which the cursor does not answer): what a call made inside a tool call is matched
   * by, its cause being the request of one of that call's attempts.
   */
  toolStepOf(eventId: string): string | undefined {
    return this.#toolStepByRequest.get(eventId);
  }

  /** The recorded model attempts this cursor answers, in replay order, matched or not. */
  get modelAttempts(): readonly RecordedAttempt[] {
    return this.#models;
  }

  /**
   * The recorded tool attempts this cursor answers that no call has matched yet (nor
   * `skipTools`, `skipAll` skipped), in request order: the calls a re-execution has still to
   * meet, or that it will not meet at all (those made inside a call that does not run again).
   * Given `of`, only those under that toolCallId, or of that name: looked up, not a scan of
   * the run, so a caller that asks this for every call it makes (an adapter, on resume and for
   * as long as the resumed run goes on) does not spend time quadratic in the run.
   * A new array each time; the cursor is not moved.
   */
  unmatchedTools(of?: ToolAttemptKey): RecordedAttempt[] {
    if (of === undefined) return this.#tools.filter((attempt) => !this.#usedTools.has(attempt));
    return of.toolCallId !== undefined
      ? this.#toolsByCallId.unused(of.toolCallId, this.#usedTools)
      : this.#toolsByName.unused(of.name, this.#usedTools);
  }

  /** Recorded model and tool attempts not yet matched. */
  get remaining(): number {
    const models = this.#models.length - this.#matchedModels.count;
    return models + this.#tools.length - this.#usedTools.size;
  }

  /** True once every recorded call has been matched: what follows runs live. */
  get atFrontier(): boolean {
    return this.remaining === 0;
  }

  /**
   * For a run whose model calls may be made at once (the calls a tool makes with
   * `Promise.all`): their requests were committed in whichever order the event loop gave, and a
   * re-execution may start them in another, so from now on a model call is matched with the
   * first recorded attempt not yet matched that has its request (the next one in order first:
   * a run recorded one call at a time is answered exactly as in order). A call whose request
   * matches none is not refused: a call made at once with a recorded one may have been cut off
   * by the crash before its request was committed, so it runs live. Every answer is still the
   * recorded answer of the same request; what is lost is the report that the re-execution asks
   * something the recording did not. An adapter calls this once the run is loaded, before its
   * first call (an option of the cursor, not of the recording: runs recorded before it replay
   * with it too).
   */
  matchModelsByRequest(): void {
    this.#modelsByRequest = true;
  }

  /** Matches the model attempt at `position` (one not matched yet). */
  #takeModelAt(position: number): ReplayMatch {
    this.#matchedModels.take(position);
    const match = matched(this.#models[position] as RecordedAttempt);
    this.#undo.set(match, () => this.#matchedModels.untake(position));
    return match;
  }

  /**
   * Matches the recorded tool attempt `attempt` (one not matched yet). A call's match in flight
   * at the crash is claimed under the cause it was asked for under (see `#repeatOf`); a retry's
   * (`takeRetry`, `asked` undefined) is not.
   */
  #takeToolAttempt(
    attempt: RecordedAttempt,
    asked: { causedByEventId?: string | undefined } | undefined,
  ): ReplayMatch {
    this.#usedTools.add(attempt);
    this.#claimedTools.add(attempt);
    const claimed = asked !== undefined && attempt.status === "requested";
    if (claimed) this.#inFlight.claim(attempt, asked.causedByEventId);
    const match = matched(attempt);
    this.#undo.set(match, () => {
      this.#usedTools.delete(attempt);
      this.#claimedTools.delete(attempt);
      if (claimed) this.#inFlight.unclaim(attempt, asked.causedByEventId);
      this.#toolsByCallId.reopen(attempt.toolCallId, attempt);
      this.#toolsByName.reopen(attempt.name, attempt);
      this.#toolsByRetryOf.reopen(attempt.retryOf, attempt);
    });
    return match;
  }

  /**
   * Gives back `match`, as handed out by `takeModel`, `takeTool` or `takeRetry`, when the call
   * it answered was not recorded after all: its request's commit was refused, or reading the
   * run back showed it did not get in. The recorded attempt is then the one the next call that
   * asks it is matched with, as if this call had never been made: the caller's retry of the
   * call is the retry of the recorded attempt (`retryOf`), and no later call takes its place.
   * For the recorder; a match it did not take (a repeat, given back twice) is left alone.
   */
  giveBack(match: ReplayMatch): void {
    const undo = this.#undo.get(match);
    if (undo === undefined) return;
    this.#undo.delete(match);
    undo();
  }

  /**
   * The position of the first model attempt not matched yet that `selects`, or -1. A scan: runs
   * matched by request are a tool's few inner calls, not an agent's thousands of turns.
   */
  #findModel(selects: (attempt: RecordedAttempt) => boolean): number {
    for (let position = this.#matchedModels.next; position < this.#models.length; position++) {
      if (this.#matchedModels.has(position)) continue;
      if (selects(this.#models[position] as RecordedAttempt)) return position;
    }
    return -1;
  }

  /**
   * The next recorded model attempt, checked against the request's hash; matching by request
   * (`matchModelsByRequest`), the first one not matched yet with this request, if any. With
   * `accepts`, only the attempts it accepts count (the next is the first of those not matched
   * yet); the others stay for later calls.
   */
  takeModel(
    requestHash: string,
    request?: JsonValue,
    accepts?: (attempt: RecordedAttempt) => boolean,
  ): ReplayMatch | undefined {
    const next = accepts === undefined ? this.#matchedModels.next : this.#findModel(accepts);
    const attempt = next === -1 ? undefined : this.#models[next];
    if (!attempt) return undefined;
    if (attempt.requestHash === requestHash) return this.#takeModelAt(next);
    if (this.#modelsByRequest) {
      const position = this.#findModel(
        (recorded) => recorded.requestHash === requestHash && (accepts?.(recorded) ?? true),
      );
      return position === -1 ? undefined : this.#takeModelAt(position);
    }
    throw modelDivergence({ position: next, attempt, requestHash, request });
  }

  /**
   * The recorded attempt of a tool call, by toolCallId, else the next one of that name. Once
   * every recorded attempt of its toolCallId is used, a call that repeats one a call of this
   * re-execution was matched with (same toolCallId, same cause: asked for by the same model
   * completion, or by none before the run's first) gets that attempt again:
   * a framework that asks for one call twice on resume (LangGraph re-running a stopped `Send`
   * task beside the tools node the resume goes to) has it answered from the ledger the way
   * the first was, not run again as a new call (see `#repeatOf`).
   */
  takeTool(
    call: ToolCallToMatch & {
      /** Only recorded attempts it accepts can match (see BeforeToolCallOptions.replayAccepts). */
      accepts?: ((attempt: RecordedAttempt) => boolean) | undefined;
      /** The model completion (or call) that asked for it, if the caller knows it. */
      causedByEventId?: string | undefined;
    },
  ): ReplayMatch | undefined {
    const attempt =
      call.toolCallId !== undefined
        ? this.#toolsByCallId.firstUnused(call.toolCallId, this.#usedTools, call.accepts)
        : this.#toolsByName.firstUnused(call.name, this.#usedTools, call.accepts);
    if (!attempt) return this.#repeatOf(call);
    sameToolRequest(attempt, call);
    return this.#takeToolAttempt(attempt, call);
  }

  /**
   * Notes an event the recorder committed: an outcome given to a recorded attempt in flight at
   * the crash that a call was matched with (abandoned after its refusal, say) is what a repeat
   * of that call gets from then on (see `#repeatOf`).
   */
  committed(event: LedgerEvent): void {
    this.#inFlight.committed(event);
  }

  /**
   * A tool call met again after a call of this re-execution was matched with its recorded
   * attempt: the last such attempt of its toolCallId (that `accepts` accepts) with the same
   * cause, recorded or (in flight at the crash) the one the first call was asked for under,
   * given or defaulted, none included, with the same request. Completed or abandoned (in the
   * ledger, or since by this process: a caller's decision), it is the answer again; still in
   * flight, it is handed out without a person's approval (which let it run once more: the
   * first call took that), so it runs again only if idempotent, otherwise it is refused, as the
   * first was, until someone decides (`abandon`; after a `retry` it is still refused, as after
   * an approval: the decision ran it once). A failed one is no answer (the repeat is a retry,
   * e.g. `withRetry`, or runs after an interrupt): undefined, as for a call without an id,
   * which is never a repeat (calls without an id are matched by name and order, and a turn may
   * make several), or one with another cause or request (a new call reusing the id: a model
   * that gives the same ids every turn).
   */
  #repeatOf(
    call: ToolCallToMatch & {
      accepts?: ((attempt: RecordedAttempt) => boolean) | undefined;
      causedByEventId?: string | undefined;
    },
  ): ReplayMatch | undefined {
    const { toolCallId, causedByEventId, accepts } = call;
    if (toolCallId === undefined) return undefined;
    let repeated: RecordedAttempt | undefined;
    for (const attempt of this.#toolsByCallId.all(toolCallId)) {
      if (!this.#claimedTools.has(attempt)) continue;
      const sameCause =
        (causedByEventId !== undefined && attempt.requested.causedByEventId === causedByEventId) ||
        (attempt.requestHash === call.requestHash &&
          this.#inFlight.claimedUnder(attempt, causedByEventId));
      if (sameCause && (accepts?.(attempt) ?? true)) repeated = attempt;
    }
    if (!repeated) return undefined;
    const current = this.#inFlight.current(repeated);
    if (current.status === "failed") return undefined;
    sameToolRequest(current, call);
    if (current.status !== "requested" || !current.approved) return matched(current);
    const { approved: _used, ...unapproved } = current;
    return matched(unapproved);
  }

  /**
   * Whether the recorded model attempt `attemptId` completed. Its retry can only have been made
   * by a resume that made the call again rather than answer it (an embedding recorded without
   * its vectors), and was committed where that resume was: after the calls recorded before the
   * crash, not next to the call. A later resume finds it by the attempt it retries (unique)
   * wherever it is; a failed call's retry is the next recorded call, or runs live.
   */
  #completedModel(attemptId: string): boolean {
    return this.#models.some(
      (attempt) => attempt.attemptId === attemptId && attempt.status === "completed",
    );
  }

  /** True when the next recorded model attempt is a retry of `attemptId`. */
  retriesNext(attemptId: string): boolean {
    return this.#models[this.#matchedModels.next]?.retryOf === attemptId;
  }

  /**
   * The recorded attempt that retried `retryOf` (the agent retries a call the ledger answered
   * as failed, as it did before the crash): a model call's retry is the next model attempt
   * (matching by request, the first unmatched one with that `retryOf`); a tool call's, the
   * unmatched tool attempt with that `retryOf`. Undefined when the recorded run did not retry
   * it here (the retry then runs live).
   */
  takeRetry(call: {
    kind: "model" | "tool";
    retryOf: string;
    requestHash: string;
  }): ReplayMatch | undefined {
    let attempt: RecordedAttempt | undefined;
    let modelPosition = this.#matchedModels.next;
    if (call.kind === "model") {
      const next = this.retriesNext(call.retryOf);
      if (this.#modelsByRequest || (!next && this.#completedModel(call.retryOf)))
        modelPosition = this.#findModel((recorded) => recorded.retryOf === call.retryOf);
      else if (!next) modelPosition = -1;
      attempt = this.#models[modelPosition];
    } else {
      attempt = this.#toolsByRetryOf.firstUnused(call.retryOf, this.#usedTools);
    }
    if (!attempt) return undefined;
    if (attempt.requestHash !== call.requestHash) throw retryDivergence(call, attempt);
    if (call.kind === "model") return this.#takeModelAt(modelPosition);
    return this.#takeToolAttempt(attempt, undefined);
  }

  /**
   * For an agent that restarts from a checkpoint rather than from its input: moves past the
   * recorded model attempts the checkpoint already covers, up to the next one whose request
   * has this hash. Returns false (and goes live) when none has. With `accepts` (the calls of one
   * conversation among several on the run), only the attempts it accepts are looked at and
   * moved past; the others stay for their own calls.
   */
  skipModelsTo(requestHash: string, accepts?: (attempt: RecordedAttempt) => boolean): boolean {
    const found = this.#findModel(
      (attempt) => attempt.requestHash === requestHash && (accepts?.(attempt) ?? true),
    );
    const end = found === -1 ? this.#models.length : found;
    if (accepts === undefined) this.#matchedModels.skipBefore(end);
    else {
      const matchedModels = this.#matchedModels;
      for (let position = matchedModels.next; position < end; position++)
        if (!matchedModels.has(position) && accepts(this.#models[position] as RecordedAttempt))
          matchedModels.take(position);
    }
    return found !== -1;
  }

  /**
   * For an agent that restarts from a checkpoint: marks the recorded tool attempts this
   * predicate selects as matched, without answering anything (calls the checkpoint already
   * holds, e.g. those of earlier turns that a later call would otherwise be matched with by a
   * reused or missing toolCallId). Returns how many were skipped. Given `of`, only the
   * attempts under that toolCallId, or of that name, are looked at (see `unmatchedTools`).
   */
  skipTools(predicate: (attempt: RecordedAttempt) => boolean, of?: ToolAttemptKey): number {
    let skipped = 0;
    for (const attempt of of === undefined ? this.#tools : this.unmatchedTools(of)) {
      if (this.#usedTools.has(attempt) || !predicate(attempt)) continue;
      this.#usedTools.add(attempt);
      skipped++;
    }
    return skipped;
  }

  /** Moves past every recorded call and input: what the run does next is live. */
  skipAll(): void {
    this.#matchedModels.skipBefore(this.#models.length);
    for (const attempt of this.#tools) this.#usedTools.add(attempt);
    this.#inputIndex = this.#inputs.length;
  }

  /** The next recorded input, when the re-execution records the same input again. */
  takeInput(): LedgerEvent | undefined {
    const event = this.#inputs[this.#inputIndex];
    if (event) this.#inputIndex++;
    return event;
  }
}
