import { type Actor, type EventStore, SessionRecorder } from "@agent-ledger/core";
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

const DEFAULT_ACTOR: Actor = { type: "agent", id: "langchain", framework: "langchain" };

/** What a person appends to a run without taking part in it: a decision on an attempt. */
const DECISIONS: ReadonlySet<string> = new Set(["attempt.abandoned", "attempt.approved"]);

/**
 * The handler's recorder, opened on first use: the one it was given, or one on its store and
 * session that continues the run `runId` names if the store has it (`SessionRecorder.resume`),
 * else a new run.
 *
 * The recorder is reopened (`SessionRecorder.reopen`, with its own options: a given recorder's
 * redaction too) when an invocation starts while no other is in progress (`runStarts`) and the
 * last invocation ended where LangGraph runs part of it again (an `interrupt()`, an error, an
 * abort, a refusal such as `unresolved-attempt`): the calls it recorded are then answered from
 * the ledger, or refused while unresolved, as a new process's handler does, instead of being run
 * again; and decisions a person appended since (abandoned or approved attempts) are taken in,
 * where the recorder would meet `conflict` at its next append. Any other event another writer
 * appended is not taken in: the next append fails with `conflict`, as it would have (that writer
 * may be running the same run). Other invocations read nothing, and one that reopens reads only
 * what was appended after the recorder's own events (the handler's first reopening reads the
 * whole run, once).
 */
export class HandlerRecorder {
  readonly #options: LedgerCallbackHandlerOptions;
  /** Hears of each recorder as it opens or reopens, before its run is started. */
  readonly #opened: (recorder: SessionRecorder) => void;
  /** Settles once the handler's writes of the last invocation are committed. */
  readonly #quiet: () => Promise<void>;
  #recorder: Promise<SessionRecorder> | undefined;
  #runId: string | undefined;
  /** The LangChain runIds of the invocations (root runs) in progress. */
  readonly #invocations = new Set<string>();
  /** The last invocation ended where LangGraph runs part of it again. */
  #rerun = false;

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
   * (an `invoke`): with no other in progress, the recorder is first reopened if LangGraph runs
   * part of the last invocation again.
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
    if (failure && isInterrupt(failure.error)) this.#rerun = true;
    try {
      await end();
    } finally {
      if (this.#invocations.delete(runId) && failure) this.#rerun = true;
    }
  }

  async #invocationStarts(runId: string): Promise<void> {
    this.#invocations.add(runId);
    // Only after an invocation that paused, failed or was aborted: a person decides after a
    // resume was refused (`unresolved-attempt`), which fails its invocation. Every other
    // invocation (each `model.invoke` of a handler given to a model) reads nothing.
    if (this.#invocations.size > 1 || !this.#recorder || !this.#rerun) return;
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
