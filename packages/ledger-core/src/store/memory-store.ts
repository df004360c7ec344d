import { isoNow } from "../events/clock.js";
import { forkSourceMissing, forkTargetTaken } from "../events/errors.js";
import { assertId, compareIds, uuidv7 } from "../events/ids.js";
import { cloneJson } from "../events/json.js";
import type { LedgerEvent, RunHead } from "../events/types.js";
import { assignCursors, EMPTY_HEAD, planAppend, planFork } from "./append-plan.js";
import {
  type EncodedBlob,
  prepareBlob,
  prepareBlobs,
  putBlobSession,
  readBlob,
  readBlobs,
} from "./blob.js";
import { ClosingGate } from "./closing-gate.js";
import type {
  AppendRequest,
  AppendResult,
  BlobTally,
  CollectBlobsOptions,
  CollectBlobsResult,
  DeleteSessionOptions,
  DeleteSessionResult,
  EventPage,
  EventStore,
  ForkRequest,
  InitOptions,
  ListSessionsRequest,
  PutBlobOptions,
  ReadRunRequest,
  ReadSessionRequest,
  RunSummary,
  SessionPage,
  StoreDescription,
} from "./event-store.js";
import { checkedInitOptions } from "./init-options.js";
import {
  assertUnchanged,
  blobGraceMs,
  collectAsIfDeleted,
  collectDryRun,
  collectResult,
  expectedEventCount,
  openRunError,
  refsOf,
  retentionGraceMs,
  sessionNotFound,
} from "./retention.js";
import { stopBeforeNextPage, stopSignal } from "./stop-signal.js";
import {
  assertRunAddress,
  validateAppend,
  validateFork,
  validateListSessions,
  validateReadRun,
  validateReadSession,
} from "./validate.js";

interface MemoryRun {
  head: RunHead;
  events: LedgerEvent[];
}

interface MemorySession {
  cursor: number;
  createdAt: string;
  updatedAt: string;
  runs: Map<string, MemoryRun>;
  /** Events in commit order: index i holds commitCursor i + 1. */
  log: LedgerEvent[];
  byEventId: Map<string, LedgerEvent>;
}

/**
 * A deep copy of a stored event. The envelope is ids, numbers and strings, so a spread copies
 * it (in key order); only its JSON members are walked. The actor holds strings only (checked
 * by validateActor). A third of cloneJson's time on a tool result.
 */
function cloneEvent(event: LedgerEvent): LedgerEvent {
  const out = { ...event };
  out.payload = cloneJson(event.payload);
  if (event.actor !== undefined) out.actor = { ...event.actor };
  if (event.metadata !== undefined) out.metadata = cloneJson(event.metadata);
  if (event.evidenceRefs !== undefined) out.evidenceRefs = [...event.evidenceRefs];
  return out;
}

/** Adds `value` to the set `map` holds under `key`, making the set on first use. */
function addToSet(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}

/**
 * The reference store: everything in process memory, deep copies on write and on read so a
 * caller can never change what is stored. Not durable; for tests, examples and as the model
 * every other store is checked against.
 */
export class MemoryEventStore implements EventStore {
  readonly #gate = new ClosingGate("memory");
  readonly #sessions = new Map<string, MemorySession>();
  /**
   * Session ids sorted, kept until a session is made or deleted: paging the list sorted every
   * id for every page, quadratic (100,000 sessions by 100: 7 s).
   */
  #sortedIds: string[] | undefined;
  /** Stored (encoded) blobs with the time they were last put. */
  readonly #blobs = new Map<string, { stored: Uint8Array; touchedAt: number }>();
  /**
   * Blob reference index: ref -> sessions whose events name it in `evidenceRefs`, or that it
   * was put for (`putBlob`'s `sessionId`).
   */
  readonly #referencedBy = new Map<string, Set<string>>();
  /** The blobs put for each session (`sessionId`), which its events may not name yet. */
  readonly #putFor = new Map<string, Set<string>>();

  /** Nothing to create or upgrade: a memory store is its own ledger, `create: false` or not. */
  async init(options?: InitOptions): Promise<void> {
    this.#gate.check("init");
    checkedInitOptions(options);
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    this.#gate.check("append");
    const valid = validateAppend(request);
    const session = this.#sessions.get(valid.sessionId);
    const run = session?.runs.get(valid.runId);
    const existing: LedgerEvent[] = [];
    if (session) {
      for (const event of valid.events) {
        const stored = session.byEventId.get(event.eventId);
        if (stored) existing.push(stored);
      }
    }
    const now = isoNow();
    const plan = planAppend({ request: valid, head: run?.head ?? EMPTY_HEAD, existing, now });
    if (plan.kind === "deduplicated")
      return { events: plan.events.map(cloneEvent), deduplicated: true };
    // The session's createdAt is its first event's recordedAt, never a later clock reading.
    const target = session ?? this.#newSession(valid.sessionId, now);
    const events = assignCursors(plan.events, target.cursor + 1);
    for (const blob of valid.blobs) this.#putBlob(blob, valid.sessionId);
    this.#commit(target, valid.runId, events, plan.head);
    return { events: events.map(cloneEvent), deduplicated: false };
  }

  #newSession(sessionId: string, now: string): MemorySession {
    const session: MemorySession = {
      cursor: 0,
      createdAt: now,
      updatedAt: now,
      runs: new Map(),
      log: [],
      byEventId: new Map(),
    };
    this.#sessions.set(sessionId, session);
    this.#sortedIds = undefined;
    return session;
  }

  #commit(session: MemorySession, runId: string, events: LedgerEvent[], head: RunHead): void {
    let run = session.runs.get(runId);
    if (!run) {
      run = { head, events: [] };
      session.runs.set(runId, run);
    }
    run.head = head;
    for (const event of events) {
      run.events.push(event);
      session.log.push(event);
      session.byEventId.set(event.eventId, event);
      for (const ref of event.evidenceRefs ?? [])
        addToSet(this.#referencedBy, ref, event.sessionId);
    }
    session.cursor += events.length;
    session.updatedAt = events[events.length - 1]?.recordedAt ?? session.updatedAt;
  }

  async readRun(request: ReadRunRequest): Promise<EventPage> {
    this.#gate.check("readRun");
    validateReadRun(request);
    const from = request.fromSeq ?? 0;
    const all = this.#sessions.get(request.sessionId)?.runs.get(request.runId)?.events ?? [];
    const page = all.slice(from, request.limit === undefined ? undefined : from + request.limit);
    return { events: page.map(cloneEvent), nextCursor: from + page.length };
  }

  async readSession(request: ReadSessionRequest): Promise<EventPage> {
    this.#gate.check("readSession");
    validateReadSession(request);
    const after = request.after ?? 0;
    const log = this.#sessions.get(request.sessionId)?.log ?? [];
    const page = log.slice(after, request.limit === undefined ? undefined : after + request.limit);
    return { events: page.map(cloneEvent), nextCursor: after + page.length };
  }

  async listRuns(sessionId: string): Promise<RunSummary[]> {
    this.#gate.check("listRuns");
    assertId(sessionId, "$.sessionId");
    const session = this.#sessions.get(sessionId);
    if (!session) return [];
    return [...session.runs.entries()].map(([runId, run]) => {
      const first = run.events[0] as LedgerEvent;
      const summary: RunSummary = {
        runId,
        length: run.head.length,
        status: run.head.status,
        lastHash: run.head.lastHash,
        startedAt: first.recordedAt,
      };
      if (first.parentRunId !== undefined) summary.parentRunId = first.parentRunId;
      return summary;
    });
  }

  async listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    this.#gate.check("listSessions");
    validateListSessions(request);
    const after = request.after;
    this.#sortedIds ??= [...this.#sessions.keys()].sort(compareIds);
    const sorted = this.#sortedIds;
    // The first id after `after`, by binary search.
    let start = 0;
    if (after !== undefined) {
      let end = sorted.length;
      while (start < end) {
        const middle = (start + end) >>> 1;
        if (compareIds(sorted[middle] as string, after) > 0) end = middle;
        else start = middle + 1;
      }
    }
    const remaining = sorted.length - start;
    const limit = request.limit ?? remaining;
    const sessions = sorted.slice(start, start + limit).map((sessionId) => {
      const session = this.#sessions.get(sessionId) as MemorySession;
      return {
        sessionId,
        eventCount: session.cursor,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
      };
    });
    const page: SessionPage = { sessions };
    if (remaining > limit && sessions.length > 0)
      page.nextCursor = sessions[sessions.length - 1]?.sessionId as string;
    return page;
  }

  async runHead(request: { sessionId: string; runId: string }): Promise<RunHead> {
    this.#gate.check("runHead");
    assertRunAddress(request);
    const head = this.#sessions.get(request.sessionId)?.runs.get(request.runId)?.head;
    return { ...(head ?? EMPTY_HEAD) };
  }

  async fork(request: ForkRequest): Promise<AppendResult> {
    this.#gate.check("fork");
    validateFork(request);
    const session = this.#sessions.get(request.sessionId);
    const source = session?.runs.get(request.runId);
    if (!session || !source) throw forkSourceMissing(request);
    if (request.uptoSeq > source.head.length) throw forkSourceMissing(request, source.head.length);
    const target = session.runs.get(request.newRunId);
    if (target) {
      throw forkTargetTaken(request.sessionId, request.newRunId, target.head.length);
    }
    const plan = planFork({
      sessionId: request.sessionId,
      newRunId: request.newRunId,
      source: source.events.slice(0, request.uptoSeq),
      newEventId: uuidv7,
      now: isoNow(),
    });
    const events = assignCursors(plan.events, session.cursor + 1);
    this.#commit(session, request.newRunId, events, plan.head);
    return { events: events.map(cloneEvent), deduplicated: false };
  }

  async putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    this.#gate.check("putBlob");
    const sessionId = putBlobSession(options);
    return this.#putBlob(prepareBlob(content), sessionId);
  }

  async putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    this.#gate.check("putBlobs");
    const sessionId = putBlobSession(options);
    // Every item is checked before the first is stored: a bad one leaves the store unchanged.
    return prepareBlobs(contents).map((blob) => this.#putBlob(blob, sessionId));
  }

  #putBlob(blob: EncodedBlob, sessionId: string | undefined): string {
    // Referenced by the session from now on, as when one of its events names it.
    if (sessionId !== undefined) {
      addToSet(this.#referencedBy, blob.ref, sessionId);
      addToSet(this.#putFor, sessionId, blob.ref);
    }
    const existing = this.#blobs.get(blob.ref);
    if (existing) existing.touchedAt = Date.now();
    else this.#blobs.set(blob.ref, { stored: blob.stored, touchedAt: Date.now() });
    return blob.ref;
  }

  async getBlob(ref: string): Promise<Uint8Array> {
    this.#gate.check("getBlob");
    return readBlob(ref, async (known) => this.#blobs.get(known)?.stored);
  }

  async getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    this.#gate.check("getBlobs");
    return readBlobs(refs, async (unique) => {
      const found = new Map<string, Uint8Array>();
      for (const ref of unique) {
        const blob = this.#blobs.get(ref);
        if (blob) found.set(ref, blob.stored);
      }
      return found;
    });
  }

  async deleteSession(
    sessionId: string,
    options: DeleteSessionOptions = {},
  ): Promise<DeleteSessionResult> {
    this.#gate.check("deleteSession");
    // The memory store's clock is its process's.
    const cutoff = Date.now() - retentionGraceMs(sessionId, options);
    const session = this.#sessions.get(sessionId);
    if (!session) throw sessionNotFound(sessionId);
    assertUnchanged(sessionId, expectedEventCount(options), session.log.length);
    const open = [...session.runs].filter(([, run]) => run.head.status === "running");
    if (open.length > 0)
      throw openRunError(
        sessionId,
        open.map(([runId]) => runId),
      );
    const refs = [...new Set([...refsOf(session.log), ...(this.#putFor.get(sessionId) ?? [])])];
    this.#putFor.delete(sessionId);
    this.#sessions.delete(sessionId);
    this.#sortedIds = undefined;
    let deletedBlobs = 0;
    for (const ref of refs) {
      const sessions = this.#referencedBy.get(ref);
      sessions?.delete(sessionId);
      if (sessions && sessions.size > 0) continue;
      this.#referencedBy.delete(ref);
      const blob = this.#blobs.get(ref);
      if (blob && blob.touchedAt <= cutoff) {
        this.#blobs.delete(ref);
        deletedBlobs++;
      }
    }
    return {
      sessionId,
      deletedEvents: session.log.length,
      deletedRuns: session.runs.size,
      deletedBlobs,
      keptBlobs: refs.length - deletedBlobs,
    };
  }

  async collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    this.#gate.check("collectBlobs");
    const graceMs = blobGraceMs(options);
    const dryRun = collectDryRun(options);
    const asIfDeleted = new Set(collectAsIfDeleted(options, dryRun));
    const signal = stopSignal(options?.signal);
    const found: BlobTally = { blobs: 0, bytes: 0 };
    // The whole map is one page: a signal stops the sweep only before it starts.
    if (await stopBeforeNextPage(signal)) return collectResult(dryRun, found, true);
    const cutoff = Date.now() - graceMs;
    const live = (id: string) => this.#sessions.has(id) && !asIfDeleted.has(id);
    for (const [ref, blob] of this.#blobs) {
      if (blob.touchedAt > cutoff) continue;
      const sessions = this.#referencedBy.get(ref);
      if (sessions !== undefined && [...sessions].some(live)) continue;
      found.blobs++;
      found.bytes += blob.stored.byteLength;
      if (dryRun) continue;
      // Only sessions that are gone still name it: a put that raced their deletion.
      for (const id of sessions ?? []) {
        const put = this.#putFor.get(id);
        put?.delete(ref);
        if (put?.size === 0) this.#putFor.delete(id);
      }
      this.#referencedBy.delete(ref);
      this.#blobs.delete(ref);
    }
    return collectResult(dryRun, found, false);
  }

  describe(): StoreDescription {
    return { kind: "memory", durability: { durable: false } };
  }

  /** See ClosingGate: every method then refuses; a memory store has nothing to let finish. */
  close(): Promise<void> {
    return this.#gate.close(async () => {});
  }
}
