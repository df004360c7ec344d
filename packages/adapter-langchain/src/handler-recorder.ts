import {
  type Actor,
  type EventStore,
  type JsonObject,
  type Redaction,
  SessionRecorder,
} from "@agent-ledger/core";
import { recordedThreadId, threadIdOf } from "./langchain-metadata.js";
import { isInterrupt } from "./tool-attempt.js";

/** Options of `LedgerCallbackHandler`: an existing recorder, or a store and a session. */
export type LedgerCallbackHandlerOptions =
  | { recorder: SessionRecorder; recordChains?: boolean }
  | {
      store: EventStore;
      sessionId: string;
      /** Give the same runId in a resumed process: the handler then continues that run. */
      runId?: string;
      actor?: Actor;
      /**
       * What every recorder the handler opens removes before hashing and storing (core's
       * `redact`): the first, each one it reopens, the one resuming after a crash, and the child
       * runs of subgraphs, which inherit it.
       */
      redact?: Redaction;
      /** Host metadata stored on every event of those recorders (core's `metadata`). */
      metadata?: JsonObject;
      recordChains?: boolean;
    };

const DEFAULT_ACTOR: Actor = { type: "agent", id: "langchain", framework: "langchain" };

/** An invocation (a LangChain run without parent) in progress. */
interface Invocation {
  /** The LangGraph thread it runs in; undefined outside one. */
  thread: string | undefined;
  /** The run's length when it started: every call it records comes after (a greater seq). */
  since: number;
  /** LangGraph runs part of the last invocation of its thread again (that one paused or failed). */
  rerun: boolean;
  /** The handler's count of pauses when it started. */
  pausesBefore: number;
}

/** What a person appends to a run without taking part in it: a decision on an attempt. */
const DECISIONS: ReadonlySet<string> = new Set(["attempt.abandoned", "attempt.approved"]);

/**
 * The handler's recorder, opened on first use: the one it was given, or one on its store and
 * session that continues the run `runId` names if the store has it (`SessionRecorder.resume`),
 * else a new run.
 *
 * The recorder is reopened (`SessionRecorder.reopen`, with its own options: a given recorder's
 * redaction too) when an invocation starts while no other is in progress (`runStarts`) and an
 * invocation ended where LangGraph runs part of it again (an `interrupt()`, an error, an
 * abort, a refusal such as `unresolved-attempt`) since the last reopening, or this invocation's
 * thread last ended so: the calls it recorded are then answered from the ledger, or refused
 * while unresolved, as a new process's handler does, instead of being run again; and decisions
 * a person appended since (abandoned or approved attempts) are taken in, where the recorder
 * would meet `conflict` at its next append. Any other event another writer appended is not
 * taken in: the next append fails with `conflict`, as it would have (that writer may be running
 * the same run). Other invocations read nothing, and one that reopens reads only what was
 * appended after the recorder's own events (the handler's first reopening reads the whole run,
 * once).
 *
 * One handler may serve several threads at once. A thread that LangGraph runs again while
 * another invocation is in progress cannot reopen the recorder: the other invocation's calls
 * in flight, and its later ones, go through it. The recorder is then given a replay again
 * (`SessionRecorder.replayAgain`) over the calls of the threads run again (this one, those
 * paused or failed and not invoked since, and those of invocations in progress that are runs
 * again), each up to where the first of its invocations in progress started: what they recorded
 * before is met as a reopened recorder meets it, and the calls in progress are no part of it.
 * That reads nothing but the first time (the recorder then keeps its run, as a reopened one
 * does) while the run the recorder keeps stays within its log's budget (32 MiB, `RunLog`);
 * past it each replay reads the run again. Decisions appended meanwhile are not taken in: the
 * next append meets `conflict`.
 */
export class HandlerRecorder {
  readonly #options: LedgerCallbackHandlerOptions;
  /** Hears of each recorder as it opens or reopens, or is given a replay again. */
  readonly #opened: (recorder: SessionRecorder) => void;
  /** Settles once the handler's writes of the last invocation are committed. */
  readonly #quiet: () => Promise<void>;
  readonly #invocationEnded: (thread: string | undefined, settled: boolean) => void;
  readonly #threadRunAgain: (thread: string | undefined) => Promise<void>;
  #recorder: Promise<SessionRecorder> | undefined;
  /** The recorder last opened: what an invocation's start reads the run's length from. */
  #current: SessionRecorder | undefined;
  #runId: string | undefined;
  /** The invocations (root runs) in progress, by LangChain runId. */
  readonly #invocations = new Map<string, Invocation>();
  /** An invocation ended where LangGraph runs part of it again, since the last reopening. */
  #rerun = false;
  /**
   * The threads (undefined: outside one) whose last invocation paused or failed, not invoked
   * since: LangGraph runs part of it again when they are.
   */
  readonly #pending = new Set<string | undefined>();
  /** How many runs paused at an `interrupt()` so far. */
  #pauses = 0;

  constructor(
    options: LedgerCallbackHandlerOptions,
    hooks: {
      opened: (recorder: SessionRecorder) => void;
      quiet: () => Promise<void>;
      /**
       * An invocation in the thread (undefined: outside one) ended; `settled`: neither failed
       * nor paused, and no other invocation of the thread is in progress (LangGraph runs none of
       * its calls again, unless the thread is run from an earlier checkpoint).
       */
      invocationEnded: (thread: string | undefined, settled: boolean) => void;
      /**
       * LangGraph runs part of the thread's last invocation again while another invocation is
       * in progress (the recorder was given a replay again, not reopened).
       */
      threadRunAgain: (thread: string | undefined) => Promise<void>;
    },
  ) {
    this.#options = options;
    this.#invocationEnded = hooks.invocationEnded;
    this.#threadRunAgain = hooks.threadRunAgain;
    this.#opened = (recorder) => {
      this.#current = recorder;
      hooks.opened(recorder);
    };
    this.#quiet = hooks.quiet;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return { invocations: this.#invocations.size, pendingThreads: this.#pending.size };
  }

  /** True when no invocation is in progress. */
  get idle(): boolean {
    return this.#invocations.size === 0;
  }

  /** True while LangChain's run `runId` is an invocation in progress (a run without parent). */
  isInvocation(runId: string): boolean {
    return this.#invocations.has(runId);
  }

  /** The recorder (opened on first use; opened again on failure to open). */
  get(): Promise<SessionRecorder> {
    if (!this.#recorder) this.#recorder = this.#open();
    return this.#recorder;
  }

  /**
   * Runs the start callback of LangChain's run `runId` (`metadata`: its own). A run without
   * parent is an invocation (an `invoke`) in the LangGraph thread its metadata names, if any:
   * if LangGraph runs part of an earlier invocation again, the recorder is first reopened, or
   * given a replay again while another invocation is in progress.
   */
  async runStarts(
    runId: string,
    parentRunId: string | undefined,
    metadata: Record<string, unknown> | undefined,
    start: () => Promise<void>,
  ): Promise<void> {
    const invocation = parentRunId === undefined;
    try {
      if (invocation) await this.#invocationStarts(runId, threadIdOf(metadata));
      await start();
    } catch (error) {
      // LangChain reports no end for a run whose start callback threw: nothing of it ran.
      if (invocation) this.#notStarted(runId);
      throw error;
    }
  }

  /**
   * Runs the end callback of LangChain's run `runId`, with the `failure` it ended with, if any.
   * An invocation that failed, or in which a run paused at an `interrupt()`, is run again in
   * part when LangGraph resumes its thread.
   */
  async runEnds(
    runId: string,
    end: () => Promise<void>,
    failure?: { error: unknown },
  ): Promise<void> {
    if (failure && isInterrupt(failure.error)) {
      this.#rerun = true;
      this.#pauses++;
    }
    try {
      await end();
    } finally {
      const invocation = this.#invocations.get(runId);
      if (invocation) {
        this.#invocations.delete(runId);
        if (failure) this.#rerun = true;
        // A pause of another invocation's run, meanwhile, counts too: its thread is then given
        // a replay it does not need, as every invocation after a pause is reopened for.
        const rerun = failure !== undefined || this.#pauses > invocation.pausesBefore;
        if (rerun) this.#pending.add(invocation.thread);
        const alone = ![...this.#invocations.values()].some(
          (other) => other.thread === invocation.thread,
        );
        this.#invocationEnded(invocation.thread, !rerun && alone);
      }
    }
  }

  async #invocationStarts(runId: string, thread: string | undefined): Promise<void> {
    const rerun = this.#pending.delete(thread);
    this.#invocations.set(runId, {
      thread,
      since: this.#current?.length ?? 0,
      rerun,
      pausesBefore: this.#pauses,
    });
    if (!this.#recorder) return;
    if (this.#invocations.size > 1) {
      if (rerun) {
        await this.#replayAgain();
        // Unless another invocation of the same thread is in progress (its calls go on).
        const same = [...this.#invocations].filter(([, other]) => other.thread === thread);
        if (same.length === 1) await this.#threadRunAgain(thread);
      }
      return;
    }
    // Only after an invocation that paused, failed or was aborted: a person decides after a
    // resume was refused (`unresolved-attempt`), which fails its invocation. Every other
    // invocation (each `model.invoke` of a handler given to a model) reads nothing.
    if (!this.#rerun && !rerun) return;
    await this.#quiet();
    const previous = await this.#recorder;
    if ((await movedOn(previous)) === "by another writer") return;
    const reopening = previous.reopen().then((recorder) => {
      this.#opened(recorder);
      return recorder;
    });
    this.#recorder = reopening;
    try {
      await reopening;
      this.#rerun = false;
    } catch (error) {
      // Reopening left the previous recorder as it was: it goes on, and the next invocation
      // tries again.
      if (this.#recorder === reopening) this.#recorder = Promise.resolve(previous);
      throw error;
    }
  }

  /** An invocation whose start failed: it did not run, its thread is as it was. */
  #notStarted(runId: string): void {
    const invocation = this.#invocations.get(runId);
    this.#invocations.delete(runId);
    if (invocation?.rerun) this.#pending.add(invocation.thread);
  }

  /**
   * Gives the recorder a replay again (see the class), while other invocations are in
   * progress: of each thread run again, what it recorded before any invocation of it in
   * progress started.
   */
  async #replayAgain(): Promise<void> {
    await this.#quiet();
    const recorder = await (this.#recorder as Promise<SessionRecorder>);
    const until = new Map<string | undefined, number>();
    for (const thread of this.#pending) until.set(thread, Number.POSITIVE_INFINITY);
    for (const { thread, rerun } of this.#invocations.values())
      if (rerun) until.set(thread, Number.POSITIVE_INFINITY);
    for (const { thread, since } of this.#invocations.values()) {
      const bound = until.get(thread);
      if (bound !== undefined) until.set(thread, Math.min(bound, since));
    }
    await recorder.replayAgain({
      select: (attempt) =>
        attempt.requested.seq < (until.get(recordedThreadId(attempt.requested)) ?? 0),
    });
    this.#opened(recorder);
  }

  #open(): Promise<SessionRecorder> {
    const opening = this.#openRecorder().then(async (recorder) => {
      this.#opened(recorder);
      await recorder.startRun({ framework: "langchain" });
      return recorder;
    });
    opening.catch(() => {
      if (this.#recorder === opening) this.#recorder = undefined;
    });
    return opening;
  }

  /**
   * The recorder on the handler's run (the option's runId, or the one opened before), continued
   * if the store holds it.
   */
  async #openRecorder(): Promise<SessionRecorder> {
    const options = this.#options;
    if ("recorder" in options) return options.recorder;
    const { store, redact, metadata } = options;
    const actor = options.actor ?? DEFAULT_ACTOR;
    // Reopened recorders and subgraphs' child runs take redact and metadata from it (core).
    const address = {
      store,
      sessionId: options.sessionId,
      actor,
      ...(redact !== undefined ? { redact } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
    };
    const id = this.#runId ?? options.runId;
    if (id !== undefined) {
      const head = await options.store.runHead({ sessionId: options.sessionId, runId: id });
      this.#runId = id;
      if (head.exists) return SessionRecorder.resume({ ...address, runId: id });
    }
    const recorder = new SessionRecorder({
      ...address,
      ...(id !== undefined ? { runId: id } : {}),
    });
    this.#runId = recorder.runId;
    return recorder;
  }
}

/** Whether the run has events the recorder has not read or written, and whose they are. */
async function movedOn(
  recorder: SessionRecorder,
): Promise<"no" | "by decisions" | "by another writer"> {
  const { store, sessionId, runId } = recorder;
  const head = await store.runHead({ sessionId, runId });
  // The run's length as the recorder read it or wrote it to: the events after are another's.
  const known = recorder.length;
  const missing = head.length - known;
  if (missing <= 0) return "no";
  const { events } = await store.readRun({ sessionId, runId, fromSeq: known, limit: missing });
  const decided = events.length === missing && events.every((event) => DECISIONS.has(event.type));
  return decided ? "by decisions" : "by another writer";
}
