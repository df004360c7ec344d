import {
  type Attempt,
  InvalidEventError,
  type JsonObject,
  type JsonValue,
} from "@agent-ledger/core";
import type { LanguageModelV3StreamPart, LanguageModelV3StreamResult } from "@ai-sdk/provider";
import type { AdapterState } from "./adapter-state.js";
import { recordCompletion, recordFailure, replayedFailure } from "./model-attempt.js";
import {
  contentToStreamParts,
  encodeModelResponse,
  recordedStreamParts,
  toolCallIdsOf,
} from "./model-response.js";
import {
  decodeStream,
  encodeStream,
  RECORDED_STREAM_VERSION,
  type RecordedStream,
} from "./recorded-stream.js";
import { StreamAssembler } from "./stream-assembler.js";

/** A stream of `parts`, pulled one at a time; ending with `thrown`'s error if given. */
function streamOf(
  parts: LanguageModelV3StreamPart[],
  thrown?: { error: unknown },
): ReadableStream<LanguageModelV3StreamPart> {
  let index = 0;
  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      pull(controller) {
        const part = parts[index++];
        if (part !== undefined) controller.enqueue(part);
        else if (thrown) controller.error(thrown.error);
        else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

function isRecordedStream(value: JsonValue | undefined): value is RecordedStream & JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A failed stream recorded with its parts: emitted again part for part, ending as it ended.
 * Its tool calls are refused with the error they were refused with live (the first error part,
 * or the error the stream ended with), so the SDK builds the same next request.
 */
function replayFailedStream(
  state: AdapterState,
  attempt: Attempt,
  recorded: JsonValue,
): LanguageModelV3StreamResult {
  if (!isRecordedStream(recorded) || recorded.version !== RECORDED_STREAM_VERSION) {
    const error = new InvalidEventError(
      "$.payload.partial.stream.version",
      `model.failed ${attempt.attemptId} holds a stream recorded as version ${JSON.stringify(
        isRecordedStream(recorded) ? (recorded.version ?? null) : recorded,
      )}; this @agent-ledger/ai-sdk replays version ${RECORDED_STREAM_VERSION}: resume with the version that recorded it`,
    );
    state.block(error);
    throw error;
  }
  const failure = replayedFailure(state, attempt);
  const { parts, thrown } = decodeStream(recorded);
  const firstError = parts.find((part) => part.type === "error");
  const refusal = firstError ? firstError.error : (thrown?.error ?? failure);
  const toolCallIds = parts.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []));
  state.causes.reject(toolCallIds, refusal);
  return { stream: streamOf(parts, thrown) };
}

/** Answers a recorded stream call from the ledger: the recorded content, then its finish part. */
export async function replayStream(
  state: AdapterState,
  attempt: Attempt,
): Promise<LanguageModelV3StreamResult> {
  const replayed = attempt.replayed;
  if (replayed?.status === "completed") {
    const parts = recordedStreamParts(replayed.result);
    const content = (replayed.result as JsonObject).content as JsonValue[];
    state.modelAnswered(attempt);
    state.causes.resolve(toolCallIdsOf(content), replayed.eventId);
    return { stream: streamOf(parts) };
  }
  const partial =
    replayed?.status === "failed" ? (replayed.partial as JsonObject | undefined) : undefined;
  if (partial?.stream !== undefined) return replayFailedStream(state, attempt, partial.stream);
  const error = replayedFailure(state, attempt);
  // A failure before the stream started is thrown. One recorded before failed streams kept
  // their parts holds only what had arrived before an error part: that, then the error.
  if (!partial) throw error;
  return {
    stream: streamOf([
      ...contentToStreamParts((partial.content ?? []) as JsonValue[]),
      { type: "error", error },
    ]),
  };
}

/**
 * Passes the provider's stream through unchanged and unbuffered (each part is read only when
 * the consumer pulls) while assembling it. At the finish part `model.completed` is committed
 * before the finish part is passed on. An error part does not end the stream (the SDK reads
 * on): the call has failed, and `model.failed` is committed once the stream ends, with every
 * part that came (`partial.stream`) and the assembled content (`partial`), before the end is
 * passed on. A read error, the abort signal or the consumer cancelling records it too.
 */
export function recordStream(options: {
  state: AdapterState;
  attempt: Attempt;
  source: ReadableStream<LanguageModelV3StreamPart>;
  abortSignal: AbortSignal | undefined;
  /** What the call is, for a refusal naming this stream while it is open. */
  kind: string;
}): ReadableStream<LanguageModelV3StreamPart> {
  const { state, attempt, abortSignal } = options;
  const reader = options.source.getReader();
  const assembler = new StreamAssembler();
  /** Every part passed on: the record of the stream if the call fails. */
  const parts: LanguageModelV3StreamPart[] = [];
  const toolCallIds: string[] = [];
  /**
   * The tool each streamed tool input is for (by its `tool-input-start`): for a refusal, and to
   * keep the input parts of the tools whose callbacks a replay must run again.
   */
  const inputTools = new Map<string, string>();
  const hasInputCallbacks = (toolName: string | undefined) =>
    toolName !== undefined && state.inputCallbackTools.has(toolName);
  /** The outcome is recorded (or being recorded). */
  let settled = false;
  /** The first error part: the call has failed, its record waits for the stream's end. */
  let failure: { error: unknown } | undefined;
  let closed = false;
  let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
  /** Resolves once the outcome is recorded (or could not be). */
  let endRecorded!: () => void;
  const recorded = new Promise<void>((resolve) => {
    endRecorded = resolve;
  });

  /** Records the failure at the stream's end; returns the error the caller must see, if any. */
  const fail = async (end: { thrown?: unknown }): Promise<unknown> => {
    if (settled) return end.thrown;
    settled = true;
    const error =
      failure?.error ??
      ("thrown" in end ? end.thrown : new Error("the model stream ended without a finish part"));
    // After an error part, each tool call was refused as it came.
    if (!failure) state.causes.reject(toolCallIds, error);
    let seen: unknown;
    try {
      seen = await recordFailure(state, attempt, error, {
        partial: { ...encodeModelResponse(assembler.result()), stream: encodeStream(parts, end) },
        aborted: abortSignal?.aborted === true,
      });
    } finally {
      endRecorded();
    }
    // The failure could not be recorded: the ledger's error instead of the stream's end.
    if (seen !== error) return seen;
    return end.thrown;
  };
  const closeWith = (error: unknown) => {
    if (closed) return;
    closed = true;
    controller.error(error);
  };
  const onAbort = () => {
    const reason = abortSignal?.reason ?? new DOMException("aborted", "AbortError");
    // The caller stops reading now; the failure is recorded in the background (a ledger error
    // then blocks the next model call).
    closeWith(reason);
    void fail({ thrown: reason });
    reader.cancel(reason).catch(() => undefined);
  };
  if (abortSignal?.aborted) queueMicrotask(onAbort);
  else abortSignal?.addEventListener("abort", onAbort, { once: true });
  const detach = () => abortSignal?.removeEventListener("abort", onAbort);
  // Its run must close while it is open (a tool returned without reading it to its end): the
  // call was paid for, so it is recorded as failed with what had streamed, and stopped.
  const abandon = async (reason: string) => {
    if (settled) return recorded;
    const error = new Error(reason);
    detach();
    closeWith(error);
    reader.cancel(error).catch(() => undefined);
    await fail({ thrown: error });
  };
  state.streamOpened(attempt, options.kind, abandon, recorded);

  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      start(streamController) {
        controller = streamController;
      },
      async pull(streamController) {
        state.streamPulled(attempt);
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          detach();
          closeWith(await fail({ thrown: error }));
          return;
        }
        if (closed) return;
        if (next.done) {
          detach();
          const seen = settled ? undefined : await fail({});
          if (seen !== undefined) closeWith(seen);
          else if (!closed) {
            closed = true;
            streamController.close();
          }
          return;
        }
        const part = next.value;
        if (!settled) {
          parts.push(part);
          assembler.add(part);
        }
        if (part.type === "tool-input-start") inputTools.set(part.id, part.toolName);
        if (part.type === "tool-call") {
          toolCallIds.push(part.toolCallId);
          state.causes.expect(part.toolCallId);
          // After an error part the SDK reads on and runs the call; the attempt has failed,
          // so its tool is refused with that error instead of waiting for a completion that
          // will never come.
          if (failure) state.causes.reject([part.toolCallId], failure.error);
        } else if (part.type === "error" && !settled && !failure) {
          failure = { error: part.error };
          state.causes.reject(toolCallIds, part.error);
        } else if (part.type === "finish" && !settled && !failure) {
          settled = true;
          parts.length = 0;
          detach();
          try {
            const completed = await recordCompletion(state, attempt, () =>
              encodeModelResponse({
                ...assembler.result(),
                toolInputs: assembler
                  .toolInputs()
                  .filter(({ part }) => hasInputCallbacks(inputTools.get(part.id))),
              }),
            ).finally(endRecorded);
            state.causes.resolve(toolCallIds, completed.eventId);
          } catch (error) {
            // Not recorded as a completion: the caller never sees a finish the ledger does not
            // hold, but the error (a response that is not plain JSON, recorded as the call's
            // failure; or the ledger's, which stops the run).
            state.causes.reject(toolCallIds, error);
            reader.cancel(error).catch(() => undefined);
            closeWith(error);
            return;
          }
        }
        if (closed) return;
        streamController.enqueue(part);
        // After a tool-call part the SDK runs the app's callbacks for it (repair, then the tool's
        // onInputAvailable and needsApproval), after a tool input part the tool's onInputStart / onInputDelta, and reads on once they
        // are done: a model call they make is this agent's.
        state.streamPassedOn(
          attempt,
          part,
          "id" in part && typeof part.id === "string" ? inputTools.get(part.id) : undefined,
        );
      },
      async cancel(reason) {
        detach();
        closed = true;
        await fail({ thrown: reason ?? new Error("the consumer cancelled the stream") });
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
