import type { Attempt, JsonObject, JsonValue } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart, LanguageModelV3StreamResult } from "@ai-sdk/provider";
import type { AdapterState } from "./adapter-state.js";
import { recordFailure, replayedFailure } from "./ledger-middleware.js";
import {
  contentToStreamParts,
  encodeModelResponse,
  recordedStreamParts,
  toolCallIdsOf,
} from "./model-response.js";
import { StreamAssembler } from "./stream-assembler.js";

function streamOf(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  let index = 0;
  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      pull(controller) {
        const part = parts[index++];
        if (part === undefined) controller.close();
        else controller.enqueue(part);
      },
    },
    { highWaterMark: 0 },
  );
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
    state.resolveCauses(toolCallIdsOf(content), replayed.eventId);
    return { stream: streamOf(parts) };
  }
  const error = replayedFailure(state, attempt);
  const partial =
    replayed?.status === "failed" ? (replayed.partial as JsonObject | undefined) : undefined;
  // A failure before the stream started is thrown; one mid-stream is re-emitted where it came.
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
 * before the finish part is passed on; an error part, a read error, the abort signal or the
 * consumer cancelling records `model.failed` with what had arrived (`partial`).
 */
export function recordStream(options: {
  state: AdapterState;
  attempt: Attempt;
  source: ReadableStream<LanguageModelV3StreamPart>;
  abortSignal: AbortSignal | undefined;
}): ReadableStream<LanguageModelV3StreamPart> {
  const { state, attempt, abortSignal } = options;
  const reader = options.source.getReader();
  const assembler = new StreamAssembler();
  const toolCallIds: string[] = [];
  let settled = false;
  /** The error the attempt failed with (recorded), once it has. */
  let failure: { error: unknown } | undefined;
  let closed = false;
  let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;

  const fail = async (error: unknown): Promise<unknown> => {
    if (settled) return error;
    settled = true;
    failure = { error };
    state.rejectCauses(toolCallIds, error);
    return recordFailure(state, attempt, error, encodeModelResponse(assembler.result()));
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
    void fail(reason);
    reader.cancel(reason).catch(() => undefined);
  };
  if (abortSignal?.aborted) queueMicrotask(onAbort);
  else abortSignal?.addEventListener("abort", onAbort, { once: true });
  const detach = () => abortSignal?.removeEventListener("abort", onAbort);

  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      start(streamController) {
        controller = streamController;
      },
      async pull(streamController) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          detach();
          closeWith(await fail(error));
          return;
        }
        if (closed) return;
        if (next.done) {
          detach();
          if (!settled) await fail(new Error("the model stream ended without a finish part"));
          closed = true;
          streamController.close();
          return;
        }
        const part = next.value;
        assembler.add(part);
        if (part.type === "tool-call") {
          toolCallIds.push(part.toolCallId);
          state.expectCause(part.toolCallId);
          // After an error part the SDK reads on and runs the call; the attempt is already
          // recorded as failed, so its tool is refused with that error instead of waiting
          // for a completion that will never come.
          if (failure) state.rejectCauses([part.toolCallId], failure.error);
        } else if (part.type === "error") {
          await fail(part.error);
        } else if (part.type === "finish" && !settled) {
          settled = true;
          detach();
          try {
            const completed = await state.recorder.modelCompleted(
              attempt,
              encodeModelResponse(assembler.result()),
            );
            state.resolveCauses(toolCallIds, completed.eventId);
          } catch (ledgerError) {
            // Not durable: the caller never sees a finish the ledger does not hold.
            state.block(ledgerError);
            state.rejectCauses(toolCallIds, ledgerError);
            reader.cancel(ledgerError).catch(() => undefined);
            closeWith(ledgerError);
            return;
          }
        }
        if (!closed) streamController.enqueue(part);
      },
      async cancel(reason) {
        detach();
        closed = true;
        await fail(reason ?? new Error("the consumer cancelled the stream"));
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
