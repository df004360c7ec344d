import {
  type Attempt,
  inspectSession,
  type JsonObject,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { ChatGenerationChunk, GenerationChunk } from "@langchain/core/outputs";
import { messageToJson, toJsonValue } from "./plain-json.js";

/**
 * The error a model call is closed with when it can no longer end by itself. LangChain reports
 * no end and no error for a stream its consumer stops reading (a `break` out of
 * `for await`, `return()`): the call would stay `requested` for good, shown unresolved on a
 * finished run. So it is closed as failed, with what it had streamed as `partial`, once the
 * handler learns it is over: the LangChain run that made it ended, or the run is closed
 * through the handler. Failed rather than completed: the model did not give its whole answer,
 * and a completion would be read as the turn's answer (history, replay).
 */
export const STREAM_LEFT_UNFINISHED = "StreamLeftUnfinished";

export function streamLeftUnfinished(why: string): Error {
  const error = new Error(
    `the stream of this model call was left unfinished: ${why}; LangChain reports no end for a stream its consumer stopped reading, what it had streamed is in \`partial\``,
  );
  error.name = STREAM_LEFT_UNFINISHED;
  return error;
}

/** A model call cut off by its `signal` (`AbortError`, as LangChain throws to the caller). */
export function abortedCall(reason: unknown): Error {
  const error = new Error(
    `the model call was aborted (signal) before its end${reason instanceof Error ? `: ${reason.message}` : ""}`,
  );
  error.name = "AbortError";
  return error;
}

/**
 * How long a stream its signal aborted is given to end by itself (LangChain reports its error)
 * before it is closed as aborted: LangChain reports nothing for a stream aborted between
 * chunks, but it does for one aborted while a chunk was on its way, once that chunk comes. A
 * call that streams a token after its abort is not closed this way: something still produces
 * it (a `_generate` that streams internally and does not stop, or a chunk LangChain pulled),
 * and LangChain reports the end of what it produces.
 */
export const ABORTED_STREAM_GRACE_MS = 250;

/** A model call in progress, as its end finds it. */
export interface StartedCall {
  attempt: Attempt;
  /** The LangGraph thread it runs in: the tool calls its answer asks for are keyed by it. */
  threadId: string | undefined;
}

/** A model call that ended, as LangChain reports it. */
export interface EndedCall extends StartedCall {
  /** What it streamed before its signal aborted it, if its signal did and it streamed. */
  partial: JsonObject | undefined;
  /** It streamed (LangChain handed its chunks to `handleLLMNewToken`). */
  streamed: boolean;
}

interface OpenCall extends StartedCall {
  parentRunId: string | undefined;
  text: string;
  chunk: ChatGenerationChunk | GenerationChunk | undefined;
  /** Its signal aborted it: what it is closed with if it does not end by itself. */
  aborted: Error | undefined;
  /** It streamed after its abort: LangChain will report its end, no grace closes it. */
  streamedAfterAbort: boolean;
  /** Stops waiting for an aborted stream's end (it ended, or it streams on). */
  stopWaiting: () => void;
  /** Stops listening to the call's signal, and stops waiting for an aborted stream's end. */
  detach: () => void;
}

/** Records a call closed as unfinished (`model.failed` with `error` and `partial`). */
export type CloseCall = (
  runId: string,
  attempt: Attempt,
  error: Error,
  partial: JsonObject | undefined,
) => Promise<void>;

/**
 * The model calls in progress, by LangChain runId: each one's attempt, what it has streamed so
 * far (from `handleLLMNewToken`), and a listener on its `signal`, so that a call that will not
 * end by itself can be closed (`close`) with what it streamed.
 *
 * A call its signal aborts is only marked aborted: the model may answer anyway (LangChain does
 * not check the signal around a non-streamed `_generate`, and its caller gets the answer), and
 * an end or error LangChain reports then decides its outcome. It is closed as aborted
 * (`AbortError`) only when it will not end by itself: a stream that had streamed something
 * (LangChain may report nothing for a stream aborted between chunks) after a short grace
 * (`ABORTED_STREAM_GRACE_MS`) unless it streams on after the abort, and any aborted call when the run that made it ends
 * (`closeUnder`: that run no longer waits for its answer) or the ledger run is closed
 * (`closeAll`). A stream left unfinished without an abort is closed at those two as well.
 */
export class ModelCallsInProgress {
  readonly #calls = new Map<string, OpenCall>();
  /** Aborted streams waiting for their end, and closings of those that did not end. */
  readonly #closing = new Set<Promise<void>>();
  readonly #close: CloseCall;

  constructor(close: CloseCall) {
    this.#close = close;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return { modelCalls: this.#calls.size, closingModelCalls: this.#closing.size };
  }

  started(
    runId: string,
    attempt: Attempt,
    call: {
      parentRunId: string | undefined;
      threadId: string | undefined;
      signal: AbortSignal | undefined;
    },
  ): void {
    const { signal } = call;
    // Stops the grace an aborted stream is given (the call ended, or streams on).
    let stopWaiting = () => {};
    const abort = () => {
      const open = this.#calls.get(runId);
      if (!open) return;
      open.aborted = abortedCall(signal?.reason);
      if (partialOf(open) === undefined) return;
      // An abort comes from outside any callback: nothing awaits this closing but `closeAll`
      // and the next invocation. If the store refuses it, the call stays unresolved, as a call
      // cut off by a crash does.
      const waited = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ABORTED_STREAM_GRACE_MS);
        stopWaiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const closing = waited.then(() => this.#closeAborted(runId)).catch(() => undefined);
      this.#closing.add(closing);
      void closing.finally(() => this.#closing.delete(closing));
    };
    signal?.addEventListener("abort", abort, { once: true });
    this.#calls.set(runId, {
      attempt,
      threadId: call.threadId,
      parentRunId: call.parentRunId,
      text: "",
      chunk: undefined,
      aborted: undefined,
      streamedAfterAbort: false,
      stopWaiting: () => stopWaiting(),
      detach: () => {
        signal?.removeEventListener("abort", abort);
        stopWaiting();
      },
    });
  }

  token(runId: string, token: string, chunk: ChatGenerationChunk | GenerationChunk | undefined) {
    const call = this.#calls.get(runId);
    if (!call) return;
    call.text += token;
    if (chunk) call.chunk = call.chunk ? call.chunk.concat(chunk as never) : chunk;
    if (call.aborted && !call.streamedAfterAbort) {
      call.streamedAfterAbort = true;
      call.stopWaiting();
    }
  }

  /** The call ended as LangChain reports it: forgotten (undefined if it was closed). */
  ended(runId: string): EndedCall | undefined {
    const call = this.#calls.get(runId);
    if (!call) return undefined;
    call.detach();
    this.#calls.delete(runId);
    const { attempt, threadId } = call;
    return {
      attempt,
      threadId,
      partial: call.aborted ? partialOf(call) : undefined,
      streamed: call.text !== "" || call.chunk !== undefined,
    };
  }

  /**
   * Closes a call that will not end by itself (with its abort, if its signal aborted it); a
   * later end LangChain reports finds nothing.
   */
  async close(runId: string, error: Error): Promise<void> {
    const call = this.#calls.get(runId);
    if (!call) return;
    this.ended(runId);
    await this.#close(runId, call.attempt, call.aborted ?? error, partialOf(call));
  }

  /** An aborted stream that did not end within its grace, nor streamed on after the abort. */
  async #closeAborted(runId: string): Promise<void> {
    const call = this.#calls.get(runId);
    if (call?.aborted && !call.streamedAfterAbort) await this.close(runId, call.aborted);
  }

  /** Closes the calls made under a LangChain run (`isUnder` their parent run) that ended. */
  async closeUnder(isUnder: (parentRunId: string | undefined) => boolean, error: Error) {
    for (const [runId, call] of [...this.#calls])
      if (isUnder(call.parentRunId)) await this.close(runId, error);
  }

  /** Settles once the aborted streams have ended or are closed, and that is recorded. */
  async settled(): Promise<void> {
    await Promise.all(this.#closing);
  }

  /** Closes every call still in progress, once the aborted ones closing are recorded. */
  async closeAll(error: Error): Promise<void> {
    for (const runId of [...this.#calls.keys()]) await this.close(runId, error);
    await this.settled();
  }
}

/** What a call streamed before it was cut off, if anything: its text, and its message. */
function partialOf(call: OpenCall): JsonObject | undefined {
  if (call.text === "" && !call.chunk) return undefined;
  const partial: JsonObject = { text: toJsonValue(call.chunk?.text || call.text) };
  const message = (call.chunk as ChatGenerationChunk | undefined)?.message;
  if (message) partial.message = messageToJson(message);
  return partial;
}

/**
 * Abandons the model calls of `recorder`'s run that the ledger holds unresolved from a process
 * that is gone (a crash mid-stream): the run is being closed, so no resume will make them
 * again, and a finished run should leave no model call unresolved. Only model calls: a tool
 * call in flight at a crash may have had its effect, which a person decides. Only on a resumed
 * run: a new one holds no call of another process.
 */
export async function abandonModelCallsLeftByCrash(recorder: SessionRecorder): Promise<void> {
  if (!recorder.resumed) return;
  const { unresolved } = await inspectSession(recorder.store, recorder.sessionId, {
    resolve: false,
  });
  for (const attempt of unresolved) {
    if (attempt.kind !== "model" || attempt.runId !== recorder.runId) continue;
    await recorder.abandon(
      attempt,
      "the process making this model call ended before it did (a crash); the run was closed without it",
    );
  }
}
