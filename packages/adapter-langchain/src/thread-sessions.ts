import {
  type Actor,
  type EventStore,
  LedgerError,
  type LedgerEvent,
  type NewEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import { isRecord } from "./plain-json.js";
import { assertThreadIdKept } from "./redacted-thread-id.js";
import { threadIdFields, threadRunId } from "./thread-run-id.js";

/**
 * The session that names, for each LangGraph thread, the sessions whose handlers recorded its
 * calls: one run per thread (`threadRunId`, as the checkpoint saver names its runs), one event
 * per session (`{ threadId, sessionId, runId }`: the run that first recorded the thread there). A handler built with another sessionId than the one that recorded a thread
 * (a typo, a setting left out) finds the right one there in one read, without reading the
 * store's other sessions.
 */
export const THREAD_SESSIONS = "langchain-thread-sessions";
export const THREAD_RECORDED_TYPE = "x.langchain.thread-recorded";

const PAGE = 1000;
const MAX_CONFLICT_RETRIES = 8;
const ACTOR: Actor = { type: "system", id: "langchain-thread-sessions", framework: "langchain" };

/** What a handler read of one thread's run in THREAD_SESSIONS. */
class ThreadRecord {
  /** The seq of the next event to read. */
  next = 0;
  /** The sessions that recorded calls of the thread. */
  readonly sessions = new Set<string>();
  /** Settles once the handler's session is named in the run (see `ThreadSessions.recording`). */
  noted: Promise<void> | undefined;
  #syncing: Promise<void> | undefined;

  constructor(
    readonly store: EventStore,
    readonly threadId: string,
  ) {}

  /** Reads what was appended since the last read; concurrent callers share one read. */
  sync(): Promise<void> {
    if (!this.#syncing) {
      this.#syncing = this.#read().finally(() => {
        this.#syncing = undefined;
      });
    }
    return this.#syncing;
  }

  async #read(): Promise<void> {
    for (;;) {
      const page = await this.store.readRun({
        sessionId: THREAD_SESSIONS,
        runId: threadRunId(this.threadId),
        fromSeq: this.next,
        limit: PAGE,
      });
      for (const event of page.events) this.add(event);
      if (page.events.length < PAGE) return;
    }
  }

  add(event: LedgerEvent): void {
    if (event.seq !== this.next) return;
    this.next += 1;
    const payload = isRecord(event.payload) ? event.payload : {};
    const { sessionId } = payload;
    if (event.type === THREAD_RECORDED_TYPE && typeof sessionId === "string")
      this.sessions.add(sessionId);
  }

  /** Names the recorder's session in the run, unless it is named already. */
  async note(recorder: SessionRecorder): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await this.sync();
      if (this.sessions.has(recorder.sessionId)) return;
      const events: NewEvent[] = [
        {
          type: THREAD_RECORDED_TYPE,
          actor: ACTOR,
          payload: {
            ...threadIdFields(this.threadId),
            sessionId: recorder.sessionId,
            runId: recorder.runId,
          },
        },
      ];
      if (this.next === 0)
        events.unshift({
          type: "run.started",
          actor: ACTOR,
          payload: { ...threadIdFields(this.threadId), kind: "langchain-thread-sessions" },
        });
      try {
        const result = await this.store.append({
          sessionId: THREAD_SESSIONS,
          runId: threadRunId(this.threadId),
          expectedSeq: this.next,
          events,
        });
        for (const event of result.events) this.add(event);
        return;
      } catch (error) {
        // Closed by someone (agent-ledger prune --cancel-open, its session left): nothing more
        // can be named there. The calls go on; the sessions named before are still read.
        if (LedgerError.isInstance(error, "run-closed")) return;
        // Another handler named its session meanwhile: read it, and name this one after it.
        if (!LedgerError.isInstance(error, "conflict") || attempt >= MAX_CONFLICT_RETRIES)
          throw error;
      }
    }
  }
}

/**
 * Which sessions recorded calls of each LangGraph thread, as a handler reads and writes them in
 * THREAD_SESSIONS. The handler names its own session there before the first call of a thread
 * it records (one read per thread for the handler's life, and one append per thread and
 * session ever); a tool call that comes from a checkpoint its run did not record (a resume)
 * reads the thread's run again, to learn which other sessions recorded the thread.
 */
export class ThreadSessions {
  readonly #threads = new Map<string, ThreadRecord>();
  /** The thread ids each recorder's redaction was found to keep (`assertThreadIdKept`). */
  readonly #kept = new WeakMap<SessionRecorder, Set<string>>();

  /**
   * Settles once the recorder's session is named among those that recorded `threadId`
   * (committed before the call the handler is about to record). Throws `invalid-argument` for a
   * thread_id the recorder's redaction removes (`assertThreadIdKept`). Read once per thread; a
   * failure (the store down) is thrown, and the next call tries again.
   */
  recording(recorder: SessionRecorder, threadId: string): Promise<void> {
    // Before the thread is named anywhere: refused, it leaves no trace in the store. Asked once
    // per recorder and thread (the answer is its redaction's), not at every call it records.
    let kept = this.#kept.get(recorder);
    if (!kept?.has(threadId)) {
      try {
        assertThreadIdKept(recorder, threadId);
      } catch (error) {
        return Promise.reject(error);
      }
      if (kept === undefined) {
        kept = new Set();
        this.#kept.set(recorder, kept);
      }
      kept.add(threadId);
    }
    const record = this.#record(recorder.store, threadId);
    if (!record.noted) {
      const noting = record.note(recorder);
      noting.catch(() => {
        if (record.noted === noting) record.noted = undefined;
      });
      record.noted = noting;
    }
    return record.noted;
  }

  /**
   * The sessions other than the recorder's that recorded calls of `threadId`, read from the
   * store now: another process may have recorded the thread since this handler last read it.
   */
  async others(recorder: SessionRecorder, threadId: string): Promise<string[]> {
    const record = this.#record(recorder.store, threadId);
    await record.sync();
    return [...record.sessions].filter((sessionId) => sessionId !== recorder.sessionId);
  }

  #record(store: EventStore, threadId: string): ThreadRecord {
    let record = this.#threads.get(threadId);
    if (!record) {
      record = new ThreadRecord(store, threadId);
      this.#threads.set(threadId, record);
    }
    return record;
  }
}
