import type { JsonObject, JsonValue } from "../events/json.js";
import type { Actor, LedgerEvent, NewEvent, RunStatus } from "../events/types.js";
import type { RecordedAttempt, ReplayCursor } from "../replay/replay-cursor.js";
import type { EventStore, RunSummary } from "../store/event-store.js";
import type { Attempt } from "./attempt.js";
import {
  type AttemptRef,
  abandonAttempt,
  approveAttempt,
  completeModelCall,
  completeToolCall,
  type DecisionOptions,
  failModelCall,
  failToolCall,
} from "./call-outcomes.js";
import {
  type BeforeModelCallOptions,
  type BeforeToolCallOptions,
  requestModelCall,
  requestToolCall,
  sameModelRequest,
} from "./call-requests.js";
import {
  attachChild,
  type ChildOptions,
  childOptions,
  loadRecordedChildren,
  recordedChildRuns,
} from "./child-runs.js";
import { declineToolCall } from "./declined-calls.js";
import { redactedPayload } from "./prepare-payload.js";
import type { ResumeOptions, SessionRecorderOptions } from "./recorder-options.js";
import { addCloseGuard, type CloseGuard, RecorderState } from "./recorder-state.js";
import { storedMetadata } from "./redact-metadata.js";
import { type OtherRunOptions, otherRunOptions, reopenOptions, reopenRun } from "./reopen.js";
import { replayAgain } from "./replay-again.js";
import { resumeOptions, resumeRun } from "./resume.js";
import { retryCall } from "./retry-call.js";
import { cancelRun, completeRun, failRun, recordInput, startRun } from "./run-lifecycle.js";
import {
  checkpoint,
  type EvidenceRecord,
  recordEvent,
  recordEvents,
  recordEvidence,
} from "./run-records.js";
import { leaveUnresolved } from "./stranded-calls.js";

export type { AttemptRef, DecisionOptions } from "./call-outcomes.js";
export type { BeforeModelCallOptions, BeforeToolCallOptions } from "./call-requests.js";
// The recorder's option types live beside the concept they configure; this module, the
// recorder's public face, names them all.
export type { ChildOptions } from "./child-runs.js";
export type { ResumeOptions, SessionRecorderOptions } from "./recorder-options.js";
export type { OtherRunOptions } from "./reopen.js";
export type { EvidenceRecord } from "./run-records.js";

/**
 * Records one run of an agent (§5): every model and tool call as `*.requested` committed
 * before the call, then `*.completed` / `*.failed`. `before*` resolves only once the request is
 * durable; if it rejects, the caller must not make the call. Concurrent calls are committed
 * together (group commit). A recorder made by `resume` answers recorded calls from the ledger.
 */
export class SessionRecorder {
  readonly store: EventStore;
  readonly sessionId: string;
  readonly runId: string;
  readonly actor: Actor;
  readonly parentRunId: string | undefined;
  readonly causedByEventId: string | undefined;
  /**
   * Everything else this recorder knows of its run, handed to the functions of each concept
   * (call-requests.ts, call-outcomes.ts, run-lifecycle.ts, resume.ts, child-runs.ts...).
   */
  readonly #state: RecorderState;

  constructor(options: SessionRecorderOptions) {
    const state = new RecorderState(options);
    this.store = state.store;
    this.sessionId = state.sessionId;
    this.runId = state.runId;
    this.actor = state.actor;
    this.parentRunId = state.parentRunId;
    this.causedByEventId = state.causedByEventId;
    this.#state = state;
  }

  /**
   * A recorder that continues a run written by a process that died. The run's events are read
   * once; re-executing the agent from its input then answers recorded calls from the ledger
   * (`attempt.replayed`), and a zombie writer of the old process loses on `conflict`.
   */
  static async resume(
    options: Omit<SessionRecorderOptions, "runId" | "parentRunId" | "causedByEventId"> & {
      runId: string;
    } & ResumeOptions,
  ): Promise<SessionRecorder> {
    const { recorderOptions, resolve } = resumeOptions(options);
    const recorder = new SessionRecorder(recorderOptions);
    await resumeRun(recorder.#state, resolve);
    return recorder;
  }

  /**
   * A recorder that continues this recorder's run as `SessionRecorder.resume` would if called
   * now, with this recorder's options (actor, redaction, metadata, compaction): its `replay` is
   * that of a fresh resume (every recorded call met again is answered from the ledger, or
   * refused while unresolved), and it takes in what other writers appended meanwhile (a
   * person's `abandon` or `approve`). For a process that goes on after its agent stopped where
   * the framework runs part of it again (a pause for a person, an error, an abort).
   *
   * Calls made on this recorder before `reopen` are committed first; every later one is refused
   * (`invalid-argument`): use the recorder returned. If reopening fails (the store is down),
   * this recorder goes on as it was.
   *
   * A recorder made by `reopen` keeps in memory the events it commits and the content of their
   * blobs, beside the run it loaded, so that reopening it again reads only the events another
   * writer appended after its own and fetches only their blobs: reopening after every pause of
   * a long run costs what happened since, not the whole run. What it keeps is bounded (32 MiB
   * of events as stored and blob content): past that it keeps nothing, and its `reopen` reads
   * the whole run as any other recorder's `reopen` does, as `resume` does (the recorder made is
   * the same either way). Either way the session's runs are listed again, as `resume` lists them
   * (`recordedChildRuns`). `not-found` if the ledger does not hold the run.
   */
  async reopen(): Promise<SessionRecorder> {
    const recorder = new SessionRecorder(reopenOptions(this.#state));
    await reopenRun(recorder.#state, this.#state);
    return recorder;
  }

  /**
   * A recorder that continues another run of this session (`runId`, recorded as `actor`) as
   * `SessionRecorder.resume` would, with this recorder's store, redaction, metadata and
   * compaction, and reading the run as this recorder read its own (`resolve`). For an adapter
   * that closes a run a crashed process left open under this one (a subgraph's child run):
   * what it writes there (an output, an error) is redacted as it would be here, which a
   * `SessionRecorder.resume` with the caller's own options would not know to do when the caller
   * was handed this recorder. `not-found` if the ledger does not hold the run.
   */
  async resumeOtherRun(options: OtherRunOptions): Promise<SessionRecorder> {
    return SessionRecorder.resume(otherRunOptions(this.#state, options));
  }

  /**
   * Answers from the ledger again the calls of this run that `select` takes: this recorder's
   * `replay` becomes a new cursor over the recorded attempts it selects, as a resume's is over
   * all of them (each attempt as the ledger holds it so far: `requested` as loaded or as
   * committed, its outcome if any). Unlike `reopen`, this recorder goes on: nothing is retired,
   * calls in progress complete on it as made, and nothing else it knows changes (its open
   * attempts, its length: events other writers appended are not taken in, and its next append
   * meets `conflict` as it would have). For a process that runs part of its agent again (a
   * framework resuming one of several conversations after a pause) while other parts go on
   * recording through this recorder: `select` must leave out the calls still in progress, or
   * the part run again would meet them as calls a crash left unresolved.
   *
   * The run is read as this recorder keeps it: a recorder made by `reopen`, or one an earlier
   * `replayAgain` was called on, reads nothing from the store. Any other reads its whole run once and keeps
   * it from then on (its events, and the content of the blobs they name), as a recorder made
   * by `reopen` does, up to the same 32 MiB: past that the run is read again each time. Calls
   * are served one at a time: the replay left is that of the last one.
   */
  replayAgain(options: { select: (attempt: RecordedAttempt) => boolean }): Promise<ReplayCursor> {
    return replayAgain(this.#state, (options as { select?: unknown } | null)?.select);
  }

  /** True when this recorder continues a run found in the ledger. */
  get resumed(): boolean {
    return this.#state.replay !== undefined;
  }

  /** Status of the run as this writer knows it. */
  get status(): RunStatus {
    return this.#state.status;
  }

  /** The replay cursor of a resumed run (undefined for a new run). */
  get replay(): ReplayCursor | undefined {
    return this.#state.replay;
  }

  /**
   * The run's length as this writer knows it: the events it read on resume and those it has
   * committed since (the next seq it writes). A store whose run is longer holds events another
   * writer appended: this writer's next append meets `conflict`.
   */
  get length(): number {
    return this.#state.queue.nextSeq;
  }

  /**
   * The runs recorded with this run as their parent, as listed once when the resumed run at the
   * top of its tree was loaded (with their status then); empty for a new run. Runs started
   * since are not in it.
   */
  recordedChildRuns(): readonly RunSummary[] {
    return recordedChildRuns(this.#state);
  }

  /** eventId of the last `model.completed` of this run: the default cause of a tool call. */
  get lastModelCompletionId(): string | undefined {
    return this.#state.lastModelCompletion;
  }

  /** Records `run.started` (with parentRunId / causedByEventId for a child run). On a resumed run, returns the recorded one. */
  startRun(payload?: unknown): Promise<LedgerEvent> {
    return startRun(this.#state, payload);
  }

  /** Records an input (a user message, a task). On resume, the recorded input is returned instead. */
  recordInput(input: unknown, options: { metadata?: JsonObject } = {}): Promise<LedgerEvent> {
    return recordInput(this.#state, input, options);
  }

  /**
   * Commits `model.requested` and resolves with the attempt once it is durable. On a resumed
   * run the recorded call at this position is returned with `replayed` set (nothing written),
   * or, if it was in flight when the process died, retried as a new attempt of the same step.
   */
  beforeModelCall(options: BeforeModelCallOptions): Promise<Attempt> {
    return requestModelCall(this.#state, options);
  }

  /**
   * Whether a model call with `request` asks what `attempt` (a model attempt) asked, compared
   * as this recorder records it: validated, redacted, then hashed. This is how an adapter
   * recognises its framework's retry of a failed call (the same request right after the
   * failure), to record it with `retry`. Comparing the caller's request with the recorded hash
   * itself would miss every retry whose request the redaction changes.
   */
  sameModelRequest(attempt: Attempt, request: unknown): boolean {
    return sameModelRequest(this.#state, attempt, request);
  }

  /**
   * `payload` as this recorder's redaction leaves it in the payload of a `type` event, and
   * nothing written: for a value an adapter derives from a payload field and keeps elsewhere,
   * such as the text a framework told its model of a failed tool, quoting the error the
   * recorder redacts in the failure's payload (metadata paths would not name it). Checked as
   * plain JSON (`non-serializable` at its path under `$.payload`) and redacted as a `startRun`
   * or `checkpoint` payload is: a path list's paths are relative to `payload`, a function gets
   * it with `{ type }` (one that throws or returns nothing is `invalid-argument` at `$.redact`).
   * A child run's recorder applies its parent's redaction unless given its own. Without
   * `redact`, the payload as plain JSON.
   */
  redactedPayload(type: string, payload: unknown): JsonValue {
    return redactedPayload(this.#state.redact, type, payload);
  }

  /**
   * The metadata an event of `type` given `metadata` would be stored with: the recorder's merged
   * with it, then redacted as the recorder redacts every event's metadata. For an adapter that
   * writes a lookup key there (a LangGraph thread id) and must know, before it records a call,
   * whether the redaction keeps it.
   */
  metadataAsStored(type: string, metadata: JsonObject): JsonObject {
    return storedMetadata(this.#state, type, metadata);
  }

  /**
   * Commits `tool.requested` (with its `effect`) and resolves once durable. On a resumed run a
   * recorded tool call is answered from the ledger; one in flight at the crash runs again only
   * if declared idempotent, else this throws `unresolved-attempt` (the error carries the
   * attempt, so the adapter can ask a person and then `retry` or `abandon` it).
   */
  beforeToolCall(options: BeforeToolCallOptions): Promise<Attempt> {
    return requestToolCall(this.#state, options);
  }

  /**
   * Records a tool call that will never run because a person or policy declined it before it
   * started (an approval request answered "no"): its `tool.requested` (as `beforeToolCall`
   * takes the call) and its `attempt.abandoned` with `reason` (and `options`, as `abandon`
   * takes them), in one append, so that no reader ever finds it in flight. Resolves with the
   * attempt answered as abandoned (`replayed`). On a resumed run the ledger answers a call it
   * holds declined, and a call it holds only requested is abandoned now: it will not run.
   */
  declineToolCall(
    call: BeforeToolCallOptions,
    reason: string,
    options: DecisionOptions = {},
  ): Promise<Attempt> {
    return declineToolCall(this.#state, call, reason, options);
  }

  /** Records `model.completed` with the response (content, tool calls, usage...). */
  modelCompleted(
    attempt: Attempt,
    response: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return completeModelCall(this.#state, attempt, response, options);
  }

  /** Records `model.failed`; the error is normalised to `{ name, message, stack?, cause? }`. */
  modelFailed(
    attempt: Attempt,
    error: unknown,
    options: { metadata?: JsonObject; partial?: unknown } = {},
  ): Promise<LedgerEvent> {
    return failModelCall(this.#state, attempt, error, options);
  }

  /** Records `tool.completed` with the tool's result. */
  toolCompleted(
    attempt: Attempt,
    result: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return completeToolCall(this.#state, attempt, result, options);
  }

  /** Records `tool.failed`. */
  toolFailed(
    attempt: Attempt,
    error: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return failToolCall(this.#state, attempt, error, options);
  }

  /**
   * A new attempt of the same step with the same request (`retryOf` = the given attempt).
   * `metadata` goes on its `*.requested` event, as `before*` puts a call's own.
   */
  retry(attempt: Attempt, options: { metadata?: JsonObject } = {}): Promise<Attempt> {
    return retryCall(this.#state, attempt, options);
  }

  /**
   * Leaves an open attempt without an outcome because none can be known (`why`): the call was
   * cut off while it ran (its caller aborted it), and may or may not have had its effect. Nothing
   * is written: the call stays unresolved in the ledger, as after a crash (a resume refuses it
   * unless idempotent or decided), and `completeRun` refuses (`unresolved-attempt`) while it is,
   * until its outcome or a decision (`abandon`) is recorded. `failRun` and `cancelRun` close.
   * A resume in this process refuses it saying `why`; one in another cannot tell it from a call
   * a crash cut off, and says it may be either.
   */
  leaveUnresolved(attempt: Attempt, why: string): void {
    leaveUnresolved(this.#state, attempt, why);
  }

  /** Records that an unresolved attempt will never complete (a person or policy decided). */
  abandon(
    attempt: AttemptRef,
    reason: string,
    options: DecisionOptions = {},
  ): Promise<LedgerEvent> {
    return abandonAttempt(this.#state, attempt, reason, options);
  }

  /**
   * Records that a person approved running an unresolved attempt again (`attempt.approved`).
   * The attempt stays unresolved; the next resume runs the call again as a new attempt of the
   * same step, even if it is not idempotent. Use it when the approval happens in another
   * process than the one that resumes (e.g. `agent-ledger resolve --approve`).
   */
  approve(
    attempt: AttemptRef,
    reason: string,
    options: DecisionOptions = {},
  ): Promise<LedgerEvent> {
    return approveAttempt(this.#state, attempt, reason, options);
  }

  /** Records adapter-owned state (`checkpoint.saved`), e.g. a serialized RunState. */
  checkpoint(state: unknown, options: { metadata?: JsonObject } = {}): Promise<LedgerEvent> {
    return checkpoint(this.#state, state, options);
  }

  /**
   * Records a compact decision record (`evidence.recorded`): a classification, a summary and
   * references to stored blobs (checked: a missing blob is `not-found`). A later record with
   * the same `key` supersedes this one in `latestEvidence`; both stay in the log. On a closed
   * run it fails with `run-closed`.
   */
  recordEvidence(record: EvidenceRecord): Promise<LedgerEvent> {
    return recordEvidence(this.#state, record);
  }

  /**
   * Closes the run as completed. On a resumed run closed the same way, returns the recorded
   * event. On a resumed run that still holds a call a crash left in flight (neither run again
   * nor resolved since: a tool call refused as not idempotent, which a framework may report only
   * as a tool error), it refuses with `unresolved-attempt` listing them (`details.unresolved`,
   * the first as `attempt`) and writes nothing: the run stays open for a person to `abandon` or
   * `approve` the call and resume it. `failRun` and `cancelRun` still close such a run.
   */
  completeRun(output?: unknown): Promise<LedgerEvent> {
    return completeRun(this.#state, output);
  }

  /** Closes the run as failed. */
  failRun(error: unknown): Promise<LedgerEvent> {
    return failRun(this.#state, error);
  }

  /** Closes the run as cancelled. */
  cancelRun(reason?: string): Promise<LedgerEvent> {
    return cancelRun(this.#state, reason);
  }

  /**
   * Has `completeRun`, `failRun` and `cancelRun` (and `record` of a run's end) wait for `guard`
   * before anything is checked or written: an adapter waits there for a call of this run that it
   * is still recording in this process (a stream its framework reads on after the app stopped
   * reading), so that the call's outcome is committed before the run takes no more events. A
   * guard that rejects refuses the close with its error, nothing written. Returns what removes
   * the guard.
   */
  guardClose(guard: CloseGuard): () => void {
    return addCloseGuard(this.#state, guard);
  }

  /**
   * Appends a custom event (`x.` prefix) or any other event type on this run. Its payload is
   * the caller's data, stored so that reads give it back as given (objects with a `$ledger`
   * key escaped): a payload of `{ "$ledger": ... }` markers is not a way to name blobs. A
   * `run.completed` written this way is refused as `completeRun` refuses it.
   */
  record(event: NewEvent): Promise<LedgerEvent> {
    return recordEvent(this.#state, event);
  }

  /**
   * Appends several events together, all or nothing; resolves with them as stored, in order.
   * Each is taken as `record` takes it (checked, its payload redacted and compacted), and all
   * are prepared before any is sent: one refused (a payload that is not plain JSON,
   * `non-serializable` at `$.events[2].payload...`; a redact function that throws for it,
   * `invalid-argument` at `$.redact` saying which event, `details.index`; one the store refuses,
   * at its `$.events[i]` field) leaves the run as it was. Then they go out as one entry of the
   * commit queue: one append, with concurrent calls' events beside them (group commit) but never
   * split from each other. For records that must not be seen one without the others (a person's
   * decisions on several calls). An outcome (`*.completed`, `*.failed`, `attempt.abandoned`)
   * and a run's end (`run.completed`, `run.failed`, `run.cancelled`) are refused
   * (`invalid-argument` at `$.events[i].type`): write those alone, as `record` or their own
   * call does. An empty list writes nothing.
   */
  recordAll(options: { events: readonly NewEvent[] }): Promise<LedgerEvent[]> {
    return recordEvents(this.#state, options);
  }

  /**
   * A recorder for a child run (a sub-agent, a handoff target) with `parentRunId` set to this
   * run. On a resumed run, a child without an explicit runId adopts a child run recorded before
   * the crash for the same actor, so its calls are answered from the ledger too: with a
   * `causedByEventId`, only the one started with that cause (or, for a retry of a call, with
   * the request of any attempt of that call); a cause the ledger does not hold is a new call,
   * which gets a new run. Without one, the next recorded without a cause, in start order.
   */
  child(options: ChildOptions): SessionRecorder {
    const child = new SessionRecorder(childOptions(this.#state, options));
    attachChild(child.#state, this.#state);
    return child;
  }

  /**
   * Loads the child runs recorded under this run so `child()` can adopt them on resume.
   * `SessionRecorder.resume` calls it; adapters rarely need it directly.
   */
  loadRecordedChildren(): Promise<void> {
    return loadRecordedChildren(this.#state);
  }
}
