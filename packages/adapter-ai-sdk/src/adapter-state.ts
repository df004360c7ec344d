import type { Attempt, SessionRecorder } from "@agent-ledger/core";

interface LastModelCall {
  attempt: Attempt;
  failed: boolean;
}

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
 * each tool call, the last model attempt (to recognise the SDK's retries), and the error that
 * stops the run (a tool's request could not be committed, or was unresolved): the SDK turns a
 * tool error into a tool-error part and goes on, so the next model call must be refused.
 */
export class AdapterState {
  readonly recorder: SessionRecorder;
  #blocked: unknown;
  #started: Promise<unknown> | undefined;
  readonly #causes = new Map<string, Deferred>();
  lastModel: LastModelCall | undefined;

  constructor(recorder: SessionRecorder) {
    this.recorder = recorder;
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
