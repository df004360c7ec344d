import { CanonicalJsonMemo } from "../compact/canonical-memo.js";
import {
  type CompactOptions,
  type CompactSession,
  PayloadCompactor,
} from "../compact/externalize.js";
import { asEscape, escapeMarkers } from "../compact/marker.js";
import { BlobCache, lastListOf, resolveEvents } from "../compact/resolve.js";
import { hashJson, sha256Hex } from "../events/canonical.js";
import {
  InvalidArgumentError,
  NotFoundError,
  ReplayDivergenceError,
  UnresolvedAttemptError,
} from "../events/errors.js";
import { assertId, uuidv7 } from "../events/ids.js";
import {
  isJsonObject,
  type JsonObject,
  type JsonValue,
  normalizeError,
  toPlainJson,
} from "../events/json.js";
import type { Actor, LedgerEvent, NewEvent, RunStatus, ToolEffect } from "../events/types.js";
import { attemptFromRecorded, ReplayCursor, type ReplayMatch } from "../replay/replay-cursor.js";
import { isBlobRef } from "../store/blob.js";
import type { EventStore, RunSummary } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import {
  assertEventStore,
  markPrevalidated,
  validateActor,
  validateEffect,
  validateMetadata,
} from "../store/validate.js";
import type { Attempt, ReplayedOutcome } from "./attempt.js";
import { CommitQueue } from "./commit-queue.js";
import { isOutcomeType, OpenAttempts, outcomeKind } from "./outcome-guard.js";
import { type Redaction, redactErrorStacks, redactPayload, validateRedaction } from "./redact.js";

export interface SessionRecorderOptions {
  store: EventStore;
  sessionId: string;
  /** Defaults to a new UUIDv7. */
  runId?: string;
  actor: Actor;
  /** Set on a child run: the run that started it. */
  parentRunId?: string;
  /** The event that caused this run (e.g. the tool call that handed off). */
  causedByEventId?: string;
  /** Removed from payloads before hashing and persisting. */
  redact?: Redaction;
  /** Host metadata stored on every event of this recorder. */
  metadata?: JsonObject;
  /**
   * Content-addressed payloads (§8), on by default: every chat message of a model request
   * and every long string of model requests and responses goes to the blob store by sha256,
   * a request's message list extends the previous request's list (structural sharing), and
   * any subtree of a model or tool payload over `thresholdBytes` goes to a blob. The event
   * keeps `{ "$ledger": kind, ref }` markers and lists the refs it introduced in
   * `evidenceRefs`; `requestHash` stays the hash of the full request. `false` stores
   * payloads inline.
   */
  compact?: CompactOptions | false;
}

/** Options of `SessionRecorder.resume`. */
export interface ResumeOptions {
  /**
   * Resolve blob references in the recorded events (default true), so replayed outcomes and
   * `attempt.request` come back as the adapter sent and received them. `false` hands them
   * over as stored, with `{ "$ledger": ... }` markers.
   */
  resolve?: boolean;
}

export interface BeforeModelCallOptions {
  stepId?: string;
  /** The request as plain JSON (messages, tools, settings; never credentials). */
  request: unknown;
  /**
   * The event that caused this call, when it is not a turn of the run's own loop: a tool that
   * calls a model itself names its `tool.requested` here. None by default.
   */
  causedByEventId?: string;
  metadata?: JsonObject;
}

export interface BeforeToolCallOptions {
  stepId?: string;
  toolCallId?: string;
  name: string;
  args: unknown;
  effect?: Partial<ToolEffect>;
  /** Defaults to the last model completion of this run (the call that asked for the tool). */
  causedByEventId?: string;
  metadata?: JsonObject;
}

export interface EvidenceRecord {
  /** Domain key: a later record with the same key supersedes this one in `latestEvidence`. */
  key?: string;
  classification: string;
  summary: string;
  evidenceRefs: string[];
}

const replayedOutcomes = new WeakMap<Attempt, LedgerEvent>();

/** `invalid-argument` at `$` unless the recorder's options are an object (not a bare id). */
function assertOptionsObject(options: unknown): void {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new InvalidArgumentError(
      "$",
      "a recorder needs options { store, sessionId, actor, runId?, ... }",
    );
}

const DEFAULT_EFFECT: ToolEffect = { kind: "unknown", idempotent: false };

/**
 * `recorded`, met again by a re-executed loop (an input, a run's end), when `payload` is what
 * it recorded; otherwise the loop is not re-executing the same run: `replay-divergence`.
 */
function sameAsRecorded(
  recorded: LedgerEvent,
  payload: JsonValue | undefined,
  what: string,
): LedgerEvent {
  if (hashJson(recorded.payload) !== hashJson(payload))
    throw new ReplayDivergenceError(
      `${what} differs from the one recorded at seq ${recorded.seq}`,
      { seq: recorded.seq, eventId: recorded.eventId },
    );
  return recorded;
}

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
  readonly #redact: Redaction | undefined;
  readonly #metadata: JsonObject | undefined;
  readonly #compactOption: CompactOptions | false | undefined;
  readonly #compactor: PayloadCompactor;
  readonly #canonical = new CanonicalJsonMemo();
  /** This run's attempts that may still get an outcome (see `OpenAttempts`). */
  readonly #open = new OpenAttempts();
  #resolveOnLoad = true;
  #queue: CommitQueue;
  #replay: ReplayCursor | undefined;
  #status: RunStatus = "running";
  #started = false;
  #startedEvent: LedgerEvent | undefined;
  /** The terminal event of a run that was already closed when this recorder loaded it. */
  #recordedEnd: LedgerEvent | undefined;
  #lastModelCompletion: string | undefined;
  /** The recorded run being read, for a child of a resumed run (see `#whenReady`). */
  #ready: Promise<void> | undefined;
  /** Set once `#ready` has resolved. */
  #loaded = false;
  /** Calls waiting for `#ready` that have not had their turn yet (see `#inTurn`). */
  #waiting = 0;
  /**
   * Set once the recorder is ready and no call waits for its turn: a call then runs at once,
   * skipping `#inTurn`'s promise (a microtask each).
   */
  #isReady = false;
  #parent: SessionRecorder | undefined;
  /**
   * Child runs recorded before a crash, adopted by `child()` on resume (see `RecordedChildren`).
   * Looked up, not searched: a scan of the list (and a splice out of it) per `child()` made
   * resuming a run with thousands of sub-agents quadratic.
   */
  #recordedChildren: RecordedChildren | undefined;
  /**
   * The request event of the first attempt of a tool call, by the request event of each of its
   * retries (only retries are here): a child run a call started (a sub-agent run by a tool) is
   * the call's, whichever of its attempts names it as its cause (see `#firstRequestOf`).
   */
  readonly #retriedRequests = new Map<string, string>();
  /**
   * The session's runs by parent, as listed when the resumed run at the top of this tree was
   * loaded. Its children, loaded in turn, find their own recorded children here: each listing
   * the whole session again made resuming a run with N sub-agents read N x N runs.
   */
  #runsByParent: Map<string, RunSummary[]> | undefined;

  constructor(options: SessionRecorderOptions) {
    assertOptionsObject(options);
    assertId(options.sessionId, "$.sessionId");
    const runId = options.runId ?? uuidv7();
    assertId(runId, "$.runId");
    if (options.parentRunId !== undefined) assertId(options.parentRunId, "$.parentRunId");
    if (options.causedByEventId !== undefined)
      assertId(options.causedByEventId, "$.causedByEventId");
    assertEventStore(options.store);
    this.store = options.store;
    this.sessionId = options.sessionId;
    this.runId = runId;
    // Frozen: every event of this recorder reaches the store with it, unchecked (validate.ts).
    this.actor = Object.freeze(validateActor(options.actor, "$.actor"));
    this.parentRunId = options.parentRunId;
    this.causedByEventId = options.causedByEventId;
    this.#redact = validateRedaction(options.redact, "$.redact");
    this.#compactOption = options.compact;
    this.#compactor = new PayloadCompactor(options.compact);
    // Every event of this recorder carries it, and most reach the store prevalidated.
    this.#metadata =
      options.metadata === undefined ? undefined : validateMetadata(options.metadata, "$.metadata");
    this.#queue = new CommitQueue({
      store: this.store,
      sessionId: this.sessionId,
      runId,
      nextSeq: 0,
    });
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
    assertOptionsObject(options);
    const { resolve, ...rest } = options;
    // Without it the constructor would make a fresh run id and resume would report that
    // invented run as not found, a message about a run the caller never named.
    assertId(rest.runId, "$.runId");
    const recorder = new SessionRecorder(rest);
    recorder.#resolveOnLoad = resolve !== false;
    await recorder.#load(true);
    return recorder;
  }

  async #load(required: boolean): Promise<void> {
    const stored = await readWholeRun(this.store, { sessionId: this.sessionId, runId: this.runId });
    const first = stored[0];
    if (!first) {
      if (required)
        throw new NotFoundError(`run ${this.runId} not found in session ${this.sessionId}`, {
          sessionId: this.sessionId,
          runId: this.runId,
        });
      return;
    }
    // What this run already committed: never re-put, and the next request extends its list.
    const cache = new BlobCache();
    for (const event of stored) this.#compactor.committed(event.evidenceRefs ?? []);
    const events = this.#resolveOnLoad
      ? await resolveEvents(this.store, stored, { cache })
      : stored;
    this.#compactor.setLastList(await lastListOf(this.store, stored, { cache }));
    this.#adopt(events);
    await this.loadRecordedChildren();
  }

  #adopt(events: LedgerEvent[]): void {
    this.#queue = new CommitQueue({
      store: this.store,
      sessionId: this.sessionId,
      runId: this.runId,
      nextSeq: events.length,
    });
    this.#replay = new ReplayCursor(events);
    this.#started = true;
    this.#startedEvent = events.find((event) => event.type === "run.started");
    const last = events[events.length - 1];
    if (last && ["run.completed", "run.failed", "run.cancelled"].includes(last.type)) {
      this.#status = last.type.slice(4) as RunStatus;
      this.#recordedEnd = last;
    }
    // The first request of each tool call, by attempt, while reading: only retries are kept.
    const firstRequests = new Map<string, string>();
    for (const event of events) {
      this.#open.read(event);
      if (event.type === "model.completed") this.#lastModelCompletion = event.eventId;
      else if (event.type === "tool.requested" && event.attemptId !== undefined) {
        const first = event.retryOf === undefined ? undefined : firstRequests.get(event.retryOf);
        firstRequests.set(event.attemptId, first ?? event.eventId);
        if (first !== undefined) this.#retriedRequests.set(event.eventId, first);
      }
    }
  }

  /** The request event of the first attempt of the call whose (retry's) request is `eventId`. */
  #firstRequestOf(eventId: string): string {
    return this.#retriedRequests.get(eventId) ?? eventId;
  }

  // Notes that `retry` (committed live) retries the tool attempt whose request is
  // `retriedEventId` (a caller's attempt may lack it: then there is nothing to note).
  #noteRetry(retry: Attempt, retriedEventId: string | undefined): Attempt {
    if (retry.kind === "tool" && typeof retriedEventId === "string")
      this.#retriedRequests.set(retry.requestedEventId, this.#firstRequestOf(retriedEventId));
    return retry;
  }

  /**
   * A payload as this recorder loaded the run's events: resolved (escaped objects given back),
   * or as stored with `resolve: false`. What a re-executed loop records is compared with the
   * recorded event in that form.
   */
  #asLoaded(payload: JsonValue, escaped: JsonValue): JsonValue {
    return this.#resolveOnLoad ? payload : escaped;
  }

  /** True when this recorder continues a run found in the ledger. */
  get resumed(): boolean {
    return this.#replay !== undefined;
  }

  /** Status of the run as this writer knows it. */
  get status(): RunStatus {
    return this.#status;
  }

  /** The replay cursor of a resumed run (undefined for a new run). */
  get replay(): ReplayCursor | undefined {
    return this.#replay;
  }

  /** eventId of the last `model.completed` of this run: the default cause of a tool call. */
  get lastModelCompletionId(): string | undefined {
    return this.#lastModelCompletion;
  }

  /**
   * Runs `call` once this recorder is ready, calls in the order they were made. Replay matches
   * calls by order (the k-th model call, tool calls of one name), and a run's events are in the
   * order its calls reached the queue, so a call must never overtake one made before it: until
   * every call that waits for the recorder has had its turn, a new call waits behind them (the
   * reactions to one promise run in the order they were added) instead of running at once.
   * `call` runs synchronously up to its first `await`, within its turn.
   */
  #inTurn<T>(call: () => Promise<T>): Promise<T> {
    if (this.#isReady || this.#whenReady() === undefined) return rejectThrown(call);
    this.#waiting++;
    return (this.#ready as Promise<void>).then(
      () => {
        this.#tookTurn();
        return call();
      },
      (error: unknown) => {
        this.#tookTurn();
        throw error;
      },
    );
  }

  #tookTurn(): void {
    this.#waiting--;
    if (this.#waiting === 0 && this.#loaded) this.#isReady = true;
  }

  /**
   * Undefined once calls may run: at once for a new run or a resumed root (read by `resume`).
   * A child of a resumed parent first reads and adopts the child run recorded before the crash:
   * the promise of that read.
   */
  #whenReady(): Promise<void> | undefined {
    if (this.#ready) return this.#ready;
    if (!this.#parent?.resumed) {
      this.#isReady = true;
      return undefined;
    }
    this.#ready = this.#load(false).then(
      () => {
        this.#loaded = true;
        if (this.#waiting === 0) this.#isReady = true;
      },
      (error: unknown) => {
        // Nothing was committed or answered meanwhile (every call waits for this): the next
        // call reads the run again instead of failing forever on one unreachable moment.
        this.#ready = undefined;
        throw error;
      },
    );
    return this.#ready;
  }

  /** `claim`, if given, runs in the recorder's turn right before the append (see `OpenAttempts`). */
  async #commit(events: NewEvent[], blobs?: string[], claim?: () => void): Promise<LedgerEvent[]> {
    const stored = await this.#inTurn(() => {
      claim?.();
      // The events are this recorder's own objects (`record` copies its caller's), so they are
      // completed in place: a merged copy of each, marked prevalidated a second time, cost more
      // than any other step of the recorder on every recorded call.
      for (const event of events) this.#withDefaults(event);
      return this.#queue.commit(events, blobs);
    });
    for (const event of stored) {
      if (event.type === "model.completed") this.#lastModelCompletion = event.eventId;
      if (
        event.type === "run.completed" ||
        event.type === "run.failed" ||
        event.type === "run.cancelled"
      ) {
        this.#status = event.type.slice(4) as RunStatus;
      }
    }
    return stored;
  }

  /**
   * Gives an event the recorder's actor and metadata, as `{ actor, metadata, ...event }` would:
   * a field the event has (even undefined) wins, and metadata of both is merged, the event's
   * keys last. Both are validated copies, so a prevalidated event stays prevalidated.
   */
  #withDefaults(event: NewEvent): void {
    if (!Object.hasOwn(event, "actor")) event.actor = this.actor;
    const metadata = this.#metadata;
    if (metadata === undefined) return;
    if (!Object.hasOwn(event, "metadata")) event.metadata = metadata;
    else if (event.metadata) event.metadata = { ...metadata, ...event.metadata };
  }

  /**
   * Commits events whose payloads went through `compact`: their refs added to `evidenceRefs`
   * (the store indexes them for retention), their new blobs stored by the same append (one
   * round trip, one commit where the store can: `AppendRequest.blobs`), and once committed
   * they are remembered so later events neither store nor index them again.
   */
  async #commitCompacted(
    events: NewEvent[],
    compact: CompactSession,
    claim?: () => void,
  ): Promise<LedgerEvent[]> {
    const { blobs, evidenceRefs } = compact.result();
    const event = events[0];
    if (event && evidenceRefs.length > 0)
      event.evidenceRefs = [...(event.evidenceRefs ?? []), ...evidenceRefs];
    const stored = await this.#commit(
      events,
      blobs.size > 0 ? [...blobs.values()] : undefined,
      claim,
    );
    this.#compactor.committed(evidenceRefs);
    if (compact.list) this.#compactor.setLastList(compact.list);
    return stored;
  }

  // Validates a value and applies redaction. Redaction paths are relative to the event
  // payload, so a value recorded under `field` (request, args, response, result) is redacted
  // as `{ [field]: value }`; the hash is taken after redaction. This is the value as the caller
  // reads it back: what is stored is it escaped (`#escaped`) or compacted, which also escapes.
  #payload(type: string, value: unknown, path: string, field?: string): JsonValue {
    const plain = toPlainJson(value === undefined ? null : value, path);
    if (this.#redact === undefined) return plain;
    if (field === undefined) return redactPayload(plain, this.#redact, { type }, "any");
    const redacted = redactPayload({ [field]: plain }, this.#redact, { type }, "object");
    return (redacted as JsonObject)[field] ?? null;
  }

  /**
   * `#payload` as stored by an event the compactor does not walk: user objects with a `$ledger`
   * key escaped (compact/marker.ts), so every read gives them back as they were.
   */
  #escaped(type: string, value: unknown, path: string, field?: string): JsonValue {
    return escapeMarkers(this.#payload(type, value, path, field));
  }

  // A reason (abandon, approve, cancelRun) is free text a person or policy wrote, and may name
  // what it is about: redacted as `{ reason }`, the field of its payload.
  #reason(type: string, reason: unknown): JsonValue {
    return this.#escaped(type, reason, "$.reason", "reason");
  }

  // A failure's payload `{ error }` is redacted as a whole (paths such as `error.message` are
  // relative to it): provider and tool errors quote credentials too. What the redaction took
  // out of an error is taken out of its stack too, which repeats the message. Returned as
  // stored (escaped); fields the recorder adds go in `fieldsOf(payload)`.
  #failure(type: string, payload: JsonObject): JsonObject {
    if (this.#redact === undefined) return payload;
    const redacted = redactPayload(payload, this.#redact, { type }, "object");
    // A path list can too (`**` puts "[redacted]" in place of the whole payload).
    if (!isJsonObject(redacted))
      throw new InvalidArgumentError(
        "$.redact",
        "a redaction must keep a failure's payload an object",
      );
    const error = redacted.error;
    let scrubbed = redacted;
    if (error !== undefined && payload.error !== undefined) {
      const stack = redactErrorStacks(payload.error, error);
      if (stack !== error) scrubbed = { ...redacted, error: stack };
    }
    // Only a redact function's fields can hold a `$ledger` key: a normalised error has none.
    return escapeMarkers(scrubbed) as JsonObject;
  }

  /** Records `run.started` (with parentRunId / causedByEventId for a child run). On a resumed run, returns the recorded one. */
  async startRun(payload?: unknown): Promise<LedgerEvent> {
    return this.#inTurn(async () => {
      if (this.#started && this.#startedEvent) return this.#startedEvent;
      const event: NewEvent = {
        type: "run.started",
        payload: this.#escaped("run.started", payload ?? {}, "$"),
      };
      if (this.parentRunId !== undefined) event.parentRunId = this.parentRunId;
      if (this.causedByEventId !== undefined) event.causedByEventId = this.causedByEventId;
      this.#started = true;
      try {
        const [stored] = await this.#commit([event]);
        this.#startedEvent = stored;
        return stored as LedgerEvent;
      } catch (error) {
        this.#started = false;
        throw error;
      }
    });
  }

  /** Records an input (a user message, a task). On resume, the recorded input is returned instead. */
  async recordInput(input: unknown, options: { metadata?: JsonObject } = {}): Promise<LedgerEvent> {
    return this.#inTurn(async () => {
      const payload = this.#payload("input.received", { input }, "$");
      const escaped = escapeMarkers(payload);
      const recorded = this.#replay?.takeInput();
      if (recorded) return sameAsRecorded(recorded, this.#asLoaded(payload, escaped), "input");
      const [stored] = await this.#commit([
        {
          type: "input.received",
          payload: escaped,
          ...(options.metadata ? { metadata: options.metadata } : {}),
        },
      ]);
      return stored as LedgerEvent;
    });
  }

  /**
   * Commits `model.requested` and resolves with the attempt once it is durable. On a resumed
   * run the recorded call at this position is returned with `replayed` set (nothing written),
   * or, if it was in flight when the process died, retried as a new attempt of the same step.
   */
  async beforeModelCall(options: BeforeModelCallOptions): Promise<Attempt> {
    return this.#inTurn(async () => {
      const request = this.#payload("model.requested", options.request, "$", "request");
      // = hashJson(request), with the JSON of message texts seen on earlier turns memoized.
      const requestHash = sha256Hex(this.#canonical.json(request));
      const match = this.#replay?.takeModel(requestHash);
      if (match) {
        const replayed = this.#answer(match);
        if (replayed) return replayed;
        // In flight at the crash: model calls count as idempotent, so run it again.
        return this.#request({
          kind: "model",
          stepId: match.attempt.stepId,
          retryOf: match.attempt.attemptId,
          request,
          requestHash,
          causedByEventId: options.causedByEventId ?? match.attempt.requested.causedByEventId,
          metadata: options.metadata,
        });
      }
      return this.#request({
        kind: "model",
        stepId: options.stepId ?? uuidv7(),
        request,
        requestHash,
        causedByEventId: options.causedByEventId,
        metadata: options.metadata,
      });
    });
  }

  /**
   * Whether a model call with `request` asks what `attempt` (a model attempt) asked, compared
   * as this recorder records it: validated, redacted, then hashed. This is how an adapter
   * recognises its framework's retry of a failed call (the same request right after the
   * failure), to record it with `retry`. Comparing the caller's request with the recorded hash
   * itself would miss every retry whose request the redaction changes.
   */
  sameModelRequest(attempt: Attempt, request: unknown): boolean {
    if (attempt.kind !== "model") return false;
    const recorded = this.#payload("model.requested", request, "$", "request");
    return sha256Hex(this.#canonical.json(recorded)) === attempt.requestHash;
  }

  /**
   * Commits `tool.requested` (with its `effect`) and resolves once durable. On a resumed run a
   * recorded tool call is answered from the ledger; one in flight at the crash runs again only
   * if declared idempotent, else this throws `unresolved-attempt` (the error carries the
   * attempt, so the adapter can ask a person and then `retry` or `abandon` it).
   */
  async beforeToolCall(options: BeforeToolCallOptions): Promise<Attempt> {
    return this.#inTurn(async () => {
      assertToolName(options.name);
      if (options.toolCallId !== undefined) assertId(options.toolCallId, "$.toolCallId");
      const args = this.#payload("tool.requested", options.args, "$", "args");
      const requestHash = hashJson({ name: options.name, args });
      const effect = toolEffect(options.effect);
      const match = this.#replay?.takeTool({
        toolCallId: options.toolCallId,
        name: options.name,
        requestHash,
      });
      const common = {
        kind: "tool" as const,
        request: args,
        requestHash,
        name: options.name,
        effect,
        toolCallId: options.toolCallId ?? match?.attempt.toolCallId,
        causedByEventId:
          options.causedByEventId ??
          match?.attempt.requested.causedByEventId ??
          this.#lastModelCompletion,
        metadata: options.metadata,
      };
      if (match) return this.#replayTool(match, effect, common);
      return this.#request(atStep(common, options.stepId ?? uuidv7()));
    });
  }

  /**
   * A recorded tool attempt met again on resume: answered from the ledger; if it was in flight
   * at the crash, run again as a new attempt of its step only when declared idempotent (now or
   * when recorded) or approved; otherwise `unresolved-attempt`, carrying the attempt.
   */
  async #replayTool(
    match: ReplayMatch,
    effect: ToolEffect,
    common: RequestCommon & { name: string },
  ): Promise<Attempt> {
    const replayed = this.#answer(match);
    if (replayed) return replayed;
    const recordedEffect = match.attempt.effect ?? DEFAULT_EFFECT;
    if (!(effect.idempotent || recordedEffect.idempotent || match.attempt.approved)) {
      const attempt = attemptFromRecorded(match.attempt);
      const toolCallId = common.toolCallId;
      throw new UnresolvedAttemptError(
        `tool call ${common.name}${toolCallId ? ` (${toolCallId})` : ""} was in flight when the process died and is not declared idempotent: it may or may not have happened. Check its effect, then retry or abandon attempt ${attempt.attemptId}.`,
        {
          attemptId: attempt.attemptId,
          stepId: attempt.stepId,
          toolCallId: attempt.toolCallId ?? null,
          name: common.name,
          seq: attempt.seq,
        },
        attempt,
      );
    }
    const retry = await this.#request(
      atStep(common, match.attempt.stepId, match.attempt.attemptId),
    );
    return this.#noteRetry(retry, match.attempt.requested.eventId);
  }

  #answer(match: ReplayMatch): Attempt | undefined {
    if (match.status === "unresolved") return undefined;
    const attempt = attemptFromRecorded(match.attempt);
    const outcome = match.attempt.outcome as LedgerEvent;
    const payload = (outcome.payload ?? {}) as JsonObject;
    let replayed: ReplayedOutcome;
    if (match.status === "completed") {
      replayed = {
        status: "completed",
        result: (attempt.kind === "model" ? payload.response : payload.result) ?? null,
        eventId: outcome.eventId,
      };
    } else if (match.status === "failed") {
      replayed = {
        status: "failed",
        error: (payload.error ?? { name: "Error", message: "failed" }) as never,
        eventId: outcome.eventId,
      };
      if (payload.partial !== undefined) replayed.partial = payload.partial;
    } else {
      replayed = {
        status: "abandoned",
        reason: String(payload.reason ?? "abandoned"),
        eventId: outcome.eventId,
      };
    }
    if (outcome.metadata !== undefined) replayed.metadata = outcome.metadata;
    attempt.replayed = replayed;
    // Not open (the ledger holds its outcome): an outcome for it is refused, but for this very
    // object, the one the adapter got back, which is answered with the recorded one.
    replayedOutcomes.set(attempt, outcome);
    return attempt;
  }

  async #request(options: RequestOptions): Promise<Attempt> {
    assertId(options.stepId, "$.stepId");
    if (options.causedByEventId !== undefined)
      assertId(options.causedByEventId, "$.causedByEventId");
    const metadata = callMetadata(options.metadata);
    const attemptId = uuidv7();
    const compact = this.#compactor.begin();
    const payload: JsonObject =
      options.kind === "model"
        ? { request: compact.request(options.request), requestHash: options.requestHash }
        : toolRequestPayload(options, compact.value(options.request, { text: false }));
    const event: NewEvent = {
      type: options.kind === "model" ? "model.requested" : "tool.requested",
      stepId: options.stepId,
      attemptId,
      payload,
    };
    if (options.retryOf !== undefined) event.retryOf = options.retryOf;
    if (options.causedByEventId !== undefined) event.causedByEventId = options.causedByEventId;
    if (metadata !== undefined) event.metadata = metadata;
    // Payload and metadata are the recorder's own validated copies: the store need not copy them.
    const [stored] = await this.#commitCompacted([markPrevalidated(event)], compact);
    const requested = stored as LedgerEvent;
    this.#open.open(attemptId, options.kind);
    const attempt: Attempt = {
      kind: options.kind,
      sessionId: this.sessionId,
      runId: this.runId,
      stepId: options.stepId,
      attemptId,
      requestedEventId: requested.eventId,
      seq: requested.seq,
      request: options.request,
      requestHash: options.requestHash,
    };
    if (options.retryOf !== undefined) attempt.retryOf = options.retryOf;
    if (options.causedByEventId !== undefined) attempt.causedByEventId = options.causedByEventId;
    if (options.toolCallId !== undefined) attempt.toolCallId = options.toolCallId;
    if (options.name !== undefined) attempt.name = options.name;
    if (options.effect !== undefined) attempt.effect = options.effect;
    return attempt;
  }

  async #resolve(
    attempt: Attempt,
    type: NewEvent["type"],
    payload: JsonObject,
    metadata?: JsonObject,
    compact?: CompactSession,
  ): Promise<LedgerEvent> {
    const recorded = replayedOutcomes.get(attempt);
    // Answered from the ledger: the outcome is already recorded, nothing to write.
    if (recorded) return recorded;
    const event: NewEvent = {
      type,
      stepId: attempt.stepId,
      attemptId: attempt.attemptId,
      causedByEventId: attempt.requestedEventId,
      payload,
    };
    // A completion's payload came through `#payload` and the compactor: the recorder's own
    // validated copy (see #request), so it goes prevalidated. A failure's normalised error is
    // checked by the store. Metadata is checked here for both, so a bad value is named by its
    // path in the caller's argument (`$.metadata.when`), not in the store's append request.
    if (metadata !== undefined) event.metadata = callMetadata(metadata);
    if (type === "model.completed" || type === "tool.completed") markPrevalidated(event);
    const [stored] = await this.#open.settle(attempt, type, this.runId, (claim) =>
      compact
        ? this.#commitCompacted([event], compact, claim)
        : this.#commit([event], undefined, claim),
    );
    return stored as LedgerEvent;
  }

  /** Records `model.completed` with the response (content, tool calls, usage...). */
  modelCompleted(
    attempt: Attempt,
    response: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return rejectThrown(() => {
      const compact = this.#compactor.begin();
      const full = this.#payload("model.completed", response, "$", "response");
      return this.#resolve(
        attempt,
        "model.completed",
        { response: compact.value(full, { text: true }) },
        options.metadata,
        compact,
      );
    });
  }

  /** Records `model.failed`; the error is normalised to `{ name, message, stack?, cause? }`. */
  modelFailed(
    attempt: Attempt,
    error: unknown,
    options: { metadata?: JsonObject; partial?: unknown } = {},
  ): Promise<LedgerEvent> {
    return rejectThrown(() => {
      const payload = this.#failure("model.failed", { error: normalizeError(error) as never });
      const compact = this.#compactor.begin();
      if (options.partial !== undefined)
        fieldsOf(payload).partial = compact.value(
          this.#payload("model.failed", options.partial, "$.partial", "partial"),
          { text: true },
        );
      return this.#resolve(attempt, "model.failed", payload, options.metadata, compact);
    });
  }

  /** Records `tool.completed` with the tool's result. */
  toolCompleted(
    attempt: Attempt,
    result: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return rejectThrown(() => {
      const compact = this.#compactor.begin();
      const full = this.#payload("tool.completed", result, "$", "result");
      const payload: JsonObject = { result: compact.value(full, { text: false }) };
      if (attempt.toolCallId !== undefined) {
        // The attempt comes back from the caller: its id enters a prevalidated payload.
        assertId(attempt.toolCallId, "$.toolCallId");
        payload.toolCallId = attempt.toolCallId;
      }
      return this.#resolve(attempt, "tool.completed", payload, options.metadata, compact);
    });
  }

  /** Records `tool.failed`. */
  toolFailed(
    attempt: Attempt,
    error: unknown,
    options: { metadata?: JsonObject } = {},
  ): Promise<LedgerEvent> {
    return rejectThrown(() => {
      const payload = this.#failure("tool.failed", { error: normalizeError(error) as never });
      if (attempt.toolCallId !== undefined) fieldsOf(payload).toolCallId = attempt.toolCallId;
      return this.#resolve(attempt, "tool.failed", payload, options.metadata);
    });
  }

  /**
   * A new attempt of the same step with the same request (`retryOf` = the given attempt).
   * `metadata` goes on its `*.requested` event, as `before*` puts a call's own.
   */
  retry(attempt: Attempt, options: { metadata?: JsonObject } = {}): Promise<Attempt> {
    // In its turn, as a recorded retry is matched by order like the call it repeats; a bad
    // attempt (even a missing one) rejects, never throws.
    return this.#inTurn(() => {
      // The attempt comes back from the caller and its parts enter a prevalidated event: each is
      // checked here, as `before*` checks a new call.
      if (attempt.kind !== "model" && attempt.kind !== "tool")
        throw new InvalidArgumentError("$.kind", "an attempt is a model or tool call");
      assertId(attempt.attemptId, "$.attemptId");
      if (attempt.toolCallId !== undefined) assertId(attempt.toolCallId, "$.toolCallId");
      // Any string (an event written without the recorder may have recorded "" here).
      if (typeof attempt.requestHash !== "string")
        throw new InvalidArgumentError("$.requestHash", "requestHash must be a string");
      toPlainJson(attempt.requestHash, "$.requestHash");
      // Only a tool call's name enters its payload.
      if (attempt.kind === "tool") assertToolName(attempt.name);
      const effect = attempt.effect !== undefined ? toolEffect(attempt.effect) : undefined;
      const common = {
        kind: attempt.kind,
        request: toPlainJson(attempt.request ?? null, "$.request"),
        requestHash: attempt.requestHash,
        ...(attempt.name !== undefined ? { name: attempt.name } : {}),
        toolCallId: attempt.toolCallId,
        ...(effect !== undefined ? { effect } : {}),
        // A retry has the cause of the attempt it repeats (the same model completion asked).
        causedByEventId: attempt.causedByEventId,
        metadata: options.metadata,
      };
      // On resume, a retry the crashed process already made is answered from the ledger too.
      const match = this.#replay?.takeRetry({
        kind: attempt.kind,
        retryOf: attempt.attemptId,
        requestHash: attempt.requestHash,
      });
      if (match && attempt.kind === "tool")
        // A tool attempt's name was checked above (assertToolName), so common has it.
        return this.#replayTool(
          match,
          effect ?? DEFAULT_EFFECT,
          common as RequestCommon & { name: string },
        );
      if (match) {
        const replayed = this.#answer(match);
        if (replayed) return Promise.resolve(replayed);
      }
      return this.#request(
        atStep(
          common,
          match?.attempt.stepId ?? attempt.stepId,
          match?.attempt.attemptId ?? attempt.attemptId,
        ),
      ).then((retry) =>
        this.#noteRetry(retry, match?.attempt.requested.eventId ?? attempt.requestedEventId),
      );
    });
  }

  /** Records that an unresolved attempt will never complete (a person or policy decided). */
  async abandon(
    attempt: Pick<Attempt, "stepId" | "attemptId" | "requestedEventId"> & { toolCallId?: string },
    reason: string,
  ): Promise<LedgerEvent> {
    if (typeof reason !== "string" || reason.length === 0)
      throw new InvalidArgumentError("$.reason", "abandoning an attempt needs a reason");
    const payload: JsonObject = { reason: this.#reason("attempt.abandoned", reason) };
    if (attempt.toolCallId !== undefined) payload.toolCallId = attempt.toolCallId;
    const [stored] = await this.#open.settle(attempt, "attempt.abandoned", this.runId, (claim) =>
      this.#commit(
        [
          {
            type: "attempt.abandoned",
            stepId: attempt.stepId,
            attemptId: attempt.attemptId,
            causedByEventId: attempt.requestedEventId,
            payload,
          },
        ],
        undefined,
        claim,
      ),
    );
    return stored as LedgerEvent;
  }

  /**
   * Records that a person approved running an unresolved attempt again (`attempt.approved`).
   * The attempt stays unresolved; the next resume runs the call again as a new attempt of the
   * same step, even if it is not idempotent. Use it when the approval happens in another
   * process than the one that resumes (e.g. `agent-ledger resolve --approve`).
   */
  async approve(
    attempt: Pick<Attempt, "stepId" | "attemptId" | "requestedEventId"> & { toolCallId?: string },
    reason: string,
  ): Promise<LedgerEvent> {
    if (typeof reason !== "string" || reason.length === 0) {
      throw new InvalidArgumentError("$.reason", "approving an attempt needs a reason");
    }
    const payload: JsonObject = { reason: this.#reason("attempt.approved", reason) };
    if (attempt.toolCallId !== undefined) payload.toolCallId = attempt.toolCallId;
    const [stored] = await this.#commit([
      {
        type: "attempt.approved",
        stepId: attempt.stepId,
        attemptId: attempt.attemptId,
        causedByEventId: attempt.requestedEventId,
        payload,
      },
    ]);
    return stored as LedgerEvent;
  }

  /** Records adapter-owned state (`checkpoint.saved`), e.g. a serialized RunState. */
  async checkpoint(state: unknown, options: { metadata?: JsonObject } = {}): Promise<LedgerEvent> {
    const event: NewEvent = {
      type: "checkpoint.saved",
      payload: this.#escaped("checkpoint.saved", state, "$"),
    };
    if (options.metadata !== undefined) event.metadata = options.metadata;
    const [stored] = await this.#commit([event]);
    return stored as LedgerEvent;
  }

  /**
   * Records a compact decision record (`evidence.recorded`): a classification, a summary and
   * references to stored blobs (checked: a missing blob is `not-found`). A later record with
   * the same `key` supersedes this one in `latestEvidence`; both stay in the log. On a closed
   * run it fails with `run-closed`.
   */
  async recordEvidence(record: EvidenceRecord): Promise<LedgerEvent> {
    if (record.key !== undefined) assertId(record.key, "$.key");
    if (typeof record.classification !== "string" || record.classification.length === 0) {
      throw new InvalidArgumentError(
        "$.classification",
        "classification must be a non-empty string",
      );
    }
    if (typeof record.summary !== "string")
      throw new InvalidArgumentError("$.summary", "summary must be a string");
    if (!Array.isArray(record.evidenceRefs))
      throw new InvalidArgumentError(
        "$.evidenceRefs",
        "evidenceRefs must be an array of sha256: references",
      );
    record.evidenceRefs.forEach((ref, index) => {
      if (!isBlobRef(ref))
        throw new InvalidArgumentError(
          `$.evidenceRefs[${index}]`,
          "a reference must be sha256:<64 hex>",
        );
    });
    // Evidence must point at something: every ref must be a stored blob.
    const refs = [...new Set(record.evidenceRefs)];
    if (refs.length > 0) {
      const found = this.store.getBlobs
        ? await this.store.getBlobs(refs)
        : new Map(
            await Promise.all(
              refs.map(async (ref) => [ref, await this.store.getBlob(ref)] as const),
            ),
          );
      const missing = refs.find((ref) => !found.has(ref));
      if (missing !== undefined)
        throw new NotFoundError(`evidence blob ${missing} is not in the store (putBlob it first)`, {
          ref: missing,
        });
    }
    const payload: JsonObject = {
      classification: record.classification,
      summary: record.summary,
      evidenceRefs: [...record.evidenceRefs],
    };
    if (record.key !== undefined) payload.key = record.key;
    const [stored] = await this.#commit([
      { type: "evidence.recorded", payload, evidenceRefs: [...record.evidenceRefs] },
    ]);
    return stored as LedgerEvent;
  }

  /** Closes the run as completed. On a resumed run closed the same way, returns the recorded event. */
  async completeRun(output?: unknown): Promise<LedgerEvent> {
    const payload = { output: this.#payload("run.completed", output ?? null, "$", "output") };
    const escaped = escapeMarkers(payload);
    return this.#close(
      { type: "run.completed", payload: escaped },
      this.#asLoaded(payload, escaped),
    );
  }

  /** Closes the run as failed. */
  async failRun(error: unknown): Promise<LedgerEvent> {
    return this.#close({
      type: "run.failed",
      payload: this.#failure("run.failed", { error: normalizeError(error) as never }),
    });
  }

  /** Closes the run as cancelled. */
  async cancelRun(reason?: string): Promise<LedgerEvent> {
    return this.#close({
      type: "run.cancelled",
      payload: reason === undefined ? {} : { reason: this.#reason("run.cancelled", reason) },
    });
  }

  // A re-executed loop closes its run (or a child's) again, as it did before the crash: like
  // startRun, that answers from the ledger. Closing it another way is still `run-closed`. A
  // completion is checked like a recorded input: other output than the recorded one means the
  // loop did not re-execute the same run (`replay-divergence`). A failure or cancellation is
  // not: its stack or reason may name a time or a process.
  async #close(event: NewEvent, output?: JsonValue): Promise<LedgerEvent> {
    return this.#inTurn(async () => {
      const recorded = this.#recordedEnd;
      if (recorded?.type === event.type)
        return event.type === "run.completed"
          ? sameAsRecorded(recorded, output, "the run's output")
          : recorded;
      const [stored] = await this.#commit([event]);
      return stored as LedgerEvent;
    });
  }

  /**
   * Appends a custom event (`x.` prefix) or any other event type on this run. Its payload is
   * the caller's data, stored so that reads give it back as given (objects with a `$ledger`
   * key escaped): a payload of `{ "$ledger": ... }` markers is not a way to name blobs.
   */
  async record(event: NewEvent): Promise<LedgerEvent> {
    // A copy: the caller's object is theirs (#commit completes its events in place).
    const copy = { ...event };
    if (copy.payload !== undefined)
      copy.payload = escapeMarkers(toPlainJson(copy.payload, "$.payload"));
    // An outcome written this way is one outcome too: it claims its attempt as modelCompleted
    // or abandon would, and a request opens its attempt for one.
    if (isOutcomeType(copy.type)) {
      const attempt = {
        attemptId: copy.attemptId,
        kind: outcomeKind(copy.type),
        runId: this.runId,
      };
      const [stored] = await this.#open.settle(attempt, copy.type, this.runId, (claim) =>
        this.#commit([copy], undefined, claim),
      );
      return stored as LedgerEvent;
    }
    const [stored] = await this.#commit([copy]);
    this.#open.read(stored as LedgerEvent);
    return stored as LedgerEvent;
  }

  /**
   * A recorder for a child run (a sub-agent, a handoff target) with `parentRunId` set to this
   * run. On a resumed run, a child without an explicit runId adopts a child run recorded before
   * the crash for the same actor, so its calls are answered from the ledger too: with a
   * `causedByEventId`, only the one started with that cause (or, for a retry of a call, with
   * the request of any attempt of that call); a cause the ledger does not hold is a new call,
   * which gets a new run. Without one, the next recorded without a cause, in start order.
   */
  child(options: {
    runId?: string;
    actor: Actor;
    causedByEventId?: string;
    redact?: Redaction;
  }): SessionRecorder {
    let runId = options.runId;
    if (runId === undefined && this.#recordedChildren) {
      // Optional: a missing actor is refused by the constructor, with its path.
      const actorId = (options.actor as Actor | undefined)?.id;
      const cause = options.causedByEventId;
      const recorded =
        cause === undefined
          ? this.#recordedChildren.uncaused.get(actorId)
          : this.#recordedChildren.byCause.get(this.#firstRequestOf(cause))?.get(actorId);
      if (recorded !== undefined && recorded.next < recorded.runIds.length)
        runId = recorded.runIds[recorded.next++];
    }
    const child = new SessionRecorder({
      store: this.store,
      sessionId: this.sessionId,
      runId: runId ?? uuidv7(),
      actor: options.actor,
      parentRunId: this.runId,
      ...(options.causedByEventId !== undefined
        ? { causedByEventId: options.causedByEventId }
        : {}),
      ...((options.redact ?? this.#redact) !== undefined
        ? { redact: (options.redact ?? this.#redact) as Redaction }
        : {}),
      ...(this.#metadata ? { metadata: this.#metadata } : {}),
      ...(this.#compactOption !== undefined ? { compact: this.#compactOption } : {}),
    });
    child.#parent = this;
    return child;
  }

  /**
   * Loads the child runs recorded under this run so `child()` can adopt them on resume.
   * `SessionRecorder.resume` calls it; adapters rarely need it directly.
   */
  async loadRecordedChildren(): Promise<void> {
    const parent = this.#parent;
    let byParent = parent === undefined ? undefined : parent.#runsByParent;
    if (byParent === undefined) {
      byParent = new Map();
      for (const run of await this.store.listRuns(this.sessionId)) {
        if (run.parentRunId === undefined) continue;
        const siblings = byParent.get(run.parentRunId);
        if (siblings === undefined) byParent.set(run.parentRunId, [run]);
        else siblings.push(run);
      }
    }
    this.#runsByParent = byParent;
    const firsts: LedgerEvent[] = [];
    for (const run of byParent.get(this.runId) ?? []) {
      const page = await this.store.readRun({
        sessionId: this.sessionId,
        runId: run.runId,
        limit: 1,
      });
      if (page.events[0]) firsts.push(page.events[0]);
    }
    firsts.sort((a, b) => a.commitCursor - b.commitCursor);
    const recorded: RecordedChildren = { uncaused: new Map(), byCause: new Map() };
    for (const event of firsts) {
      let byActor = recorded.uncaused;
      if (event.causedByEventId !== undefined) {
        const cause = this.#firstRequestOf(event.causedByEventId);
        byActor = recorded.byCause.get(cause) ?? new Map();
        recorded.byCause.set(cause, byActor);
      }
      const actorId = event.actor?.id;
      const own = byActor.get(actorId);
      if (own === undefined) byActor.set(actorId, { runIds: [event.runId], next: 0 });
      else own.runIds.push(event.runId);
    }
    this.#recordedChildren = recorded;
  }
}

/** Recorded child runs of one actor, in start order: `next` is the first not adopted yet. */
interface AdoptableRuns {
  runIds: string[];
  next: number;
}

/**
 * The child runs recorded under a run, as `child()` adopts them on resume, by actor id. One
 * started with a cause (the tool call that ran a sub-agent, the model completion that handed
 * off) is adopted only by the child of that same cause, so a later call never takes over the
 * run, completed or not, of an earlier call of the same agent: `byCause`, keyed by the request
 * of the first attempt of a call when the cause is a request. The others are adopted in order.
 */
interface RecordedChildren {
  uncaused: Map<string | undefined, AdoptableRuns>;
  byCause: Map<string, Map<string | undefined, AdoptableRuns>>;
}

/** What `#request` commits: one model or tool attempt. */
interface RequestOptions {
  kind: "model" | "tool";
  stepId: string;
  retryOf?: string | undefined;
  request: JsonValue;
  requestHash: string;
  name?: string;
  toolCallId?: string | undefined;
  effect?: ToolEffect;
  causedByEventId?: string | undefined;
  metadata?: JsonObject | undefined;
}

/** A request's fields but its place (step and retry): what `before*` and `retry` gather first. */
type RequestCommon = Omit<RequestOptions, "stepId" | "retryOf">;

/**
 * `{ ...common, stepId, retryOf }`, written out: on Node 20 a literal that adds properties after
 * a spread takes V8's slow path, measured at 1-2 µs for these nine fields on every tool call.
 */
function atStep(common: RequestCommon, stepId: string, retryOf?: string): RequestOptions {
  return {
    kind: common.kind,
    stepId,
    retryOf,
    request: common.request,
    requestHash: common.requestHash,
    name: common.name,
    toolCallId: common.toolCallId,
    effect: common.effect,
    causedByEventId: common.causedByEventId,
    metadata: common.metadata,
  };
}

/**
 * A tool request's payload, keys in this order: `{ toolCallId?, name, args, effect, requestHash }`.
 * Written field by field: the literal with a conditional spread first took V8's slow path
 * (properties added after a spread), a few µs of every recorded tool call.
 */
function toolRequestPayload(options: RequestOptions, args: JsonValue): JsonObject {
  const payload: JsonObject = {};
  if (options.toolCallId !== undefined) payload.toolCallId = options.toolCallId;
  payload.name = options.name as string;
  payload.args = args;
  payload.effect = options.effect as unknown as JsonObject;
  payload.requestHash = options.requestHash;
  return payload;
}

/**
 * The object a recorder adds its own fields to in a failure payload it stored escaped (a redact
 * function gave it a `$ledger` key): the escaped object, which reads give back with them.
 */
function fieldsOf(payload: JsonObject): JsonObject {
  return asEscape(payload) ?? payload;
}

/** Per-call metadata, validated here: the recorder's events reach the store prevalidated. */
function callMetadata(metadata: JsonObject | undefined): JsonObject | undefined {
  return metadata === undefined ? undefined : validateMetadata(metadata, "$.metadata");
}

/**
 * `call()`, or a promise rejected with what it threw: every async API of the recorder rejects,
 * never throws (`Promise.allSettled(attempts.map(...))` must see each call's own outcome).
 */
function rejectThrown<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A tool call's effect with the defaults filled in, checked as the store would check it. */
function toolEffect(given: Partial<ToolEffect> | undefined): ToolEffect {
  const effect = toPlainJson({ ...DEFAULT_EFFECT, ...given }, "$.effect");
  validateEffect({ effect }, "$");
  return effect as unknown as ToolEffect;
}

/** A tool's name: a non-empty string that can be stored (it enters a prevalidated payload). */
function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== "string" || name.length === 0)
    throw new InvalidArgumentError("$.name", "a tool call needs a name");
  toPlainJson(name, "$.name");
}
