import {
  type Actor,
  type EventStore,
  InvalidArgumentError,
  SessionRecorder,
} from "@agent-ledger/core";
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
      recordChains?: boolean;
    };

type StoreOptions = Exclude<LedgerCallbackHandlerOptions, { recorder: SessionRecorder }>;

const DEFAULT_ACTOR: Actor = { type: "agent", id: "langchain", framework: "langchain" };

/** What a person appends to a run without taking part in it: a decision on an attempt. */
const DECISIONS: ReadonlySet<string> = new Set(["attempt.abandoned", "attempt.approved"]);

/**
 * The handler's recorder, opened on first use: the one it was given, or one on its store and
 * session that continues the run `runId` names if the store has it (`SessionRecorder.resume`),
 * else a new run.
 *
 * A recorder the handler opened itself is opened again, reading its run anew, when an
 * invocation starts while no other is in progress (`runStarts`) and the last invocation ended
 * where LangGraph runs part of it again (an `interrupt()`, an error, an abort, a refusal such
 * as `unresolved-attempt`): the calls it recorded are then answered from the ledger, or refused
 * while unresolved, as a new process's handler does, instead of being run again; and decisions
 * a person appended since (abandoned or approved attempts) are taken in, where the handler's
 * recorder would meet `conflict` at its next append. Any other event another writer appended
 * is not taken in: the next append fails with `conflict`, as it would have (that writer may be
 * running the same run). Other invocations read nothing.
 */
export class HandlerRecorder {
  readonly #options: LedgerCallbackHandlerOptions;
  /** Hears of each recorder as it opens, before its run is started. */
  readonly #opened: (recorder: SessionRecorder) => void;
  /** Settles once the handler's writes of the last invocation are committed. */
  readonly #quiet: () => Promise<void>;
  #recorder: Promise<SessionRecorder> | undefined;
  #runId: string | undefined;
  /** The LangChain runIds of the invocations (root runs) in progress. */
  readonly #invocations = new Set<string>();
  /** The last invocation ended where LangGraph runs part of it again. */
  #rerun = false;
  /** An invocation paused at an `interrupt()`: LangGraph's resume runs its calls again. */
  #paused = false;

  constructor(
    options: LedgerCallbackHandlerOptions,
    hooks: { opened: (recorder: SessionRecorder) => void; quiet: () => Promise<void> },
  ) {
    this.#options = options;
    this.#opened = hooks.opened;
    this.#quiet = hooks.quiet;
  }

  /** The recorder (opened on first use; opened again on failure to open). */
  get(): Promise<SessionRecorder> {
    if (!this.#recorder) this.#recorder = this.#open();
    return this.#recorder;
  }

  /**
   * Runs the start callback of LangChain's run `runId`. A run without parent is an invocation
   * (an `invoke`): with no other in progress, the recorder is first opened again if the run took
   * decisions meanwhile, or if LangGraph runs part of the last invocation again.
   */
  async runStarts(
    runId: string,
    parentRunId: string | undefined,
    start: () => Promise<void>,
  ): Promise<void> {
    const invocation = parentRunId === undefined;
    try {
      if (invocation) await this.#invocationStarts(runId);
      await start();
    } catch (error) {
      // LangChain reports no end for a run whose start callback threw.
      if (invocation) this.#invocations.delete(runId);
      throw error;
    }
  }

  /**
   * Runs the end callback of LangChain's run `runId`, with the `failure` it ended with, if any.
   * An invocation that failed, or any run paused at an `interrupt()`, is run again in part when
   * LangGraph resumes.
   */
  async runEnds(
    runId: string,
    end: () => Promise<void>,
    failure?: { error: unknown },
  ): Promise<void> {
    if (failure && isInterrupt(failure.error)) {
      this.#rerun = true;
      this.#paused = true;
    }
    try {
      await end();
    } finally {
      if (this.#invocations.delete(runId) && failure) this.#rerun = true;
    }
  }

  async #invocationStarts(runId: string): Promise<void> {
    this.#invocations.add(runId);
    const options = this.#options;
    if (this.#invocations.size > 1 || !this.#recorder) return;
    if ("recorder" in options) {
      // Not read again (it is the caller's, with the caller's redaction): LangGraph's resume
      // would run again, live, calls it recorded before the pause.
      if (this.#paused)
        throw new InvalidArgumentError(
          "$.recorder",
          "this handler was built on a recorder, and an invocation it ran paused at interrupt(): resuming on it would run again the calls recorded before the pause (LangGraph runs them again, and this handler cannot answer them from the ledger). Resume with a new handler built with { store, sessionId, runId } (or on a recorder from SessionRecorder.resume made after the pause)",
        );
      return;
    }
    // Only after an invocation that paused, failed or was aborted: a person decides after a
    // resume was refused (`unresolved-attempt`), which fails its invocation. Every other
    // invocation (each `model.invoke` of a handler given to a model) reads nothing.
    if (!this.#rerun) return;
    await this.#quiet();
    if ((await this.#movedOn(options, await this.#recorder)) === "by another writer") return;
    this.#rerun = false;
    this.#recorder = this.#open();
    await this.#recorder;
  }

  /** Whether the run has events the recorder has not read or written, and whose they are. */
  async #movedOn(
    options: StoreOptions,
    recorder: SessionRecorder,
  ): Promise<"no" | "by decisions" | "by another writer"> {
    const address = { sessionId: options.sessionId, runId: recorder.runId };
    const head = await options.store.runHead(address);
    // The run's length as the recorder read it or wrote it to: the events after are another's.
    const known = recorder.length;
    const missing = head.length - known;
    if (missing <= 0) return "no";
    const { events } = await options.store.readRun({
      ...address,
      fromSeq: known,
      limit: missing,
    });
    const decided = events.length === missing && events.every((event) => DECISIONS.has(event.type));
    return decided ? "by decisions" : "by another writer";
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
    const { store } = options;
    const actor = options.actor ?? DEFAULT_ACTOR;
    const address = { store, sessionId: options.sessionId, actor };
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
