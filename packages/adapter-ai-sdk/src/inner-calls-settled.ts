import {
  type Attempt,
  InvalidArgumentError,
  type SessionRecorder,
  StoreUnavailableError,
  toolCallLabel,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { checkedOptions } from "./adapter-options.js";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";

export interface InnerCallsSettledOptions {
  recorder: SessionRecorder;
  /** Stop waiting once it aborts (its reason becomes the error's `cause`). */
  signal?: AbortSignal;
  /** Stop waiting after this many milliseconds. */
  timeoutMs?: number;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  const signal = value as Partial<AbortSignal> | null;
  return (
    typeof signal === "object" &&
    signal !== null &&
    typeof signal.aborted === "boolean" &&
    typeof signal.addEventListener === "function" &&
    typeof signal.removeEventListener === "function"
  );
}

function checked(options: InnerCallsSettledOptions): InnerCallsSettledOptions {
  const { signal, timeoutMs } = checkedOptions<InnerCallsSettledOptions>(
    options,
    { recorder: true, signal: true, timeoutMs: true },
    "innerCallsSettled",
  );
  if (signal !== undefined && !isAbortSignal(signal))
    throw new InvalidArgumentError("$.signal", "expected an AbortSignal");
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0)
  )
    throw new InvalidArgumentError("$.timeoutMs", "expected a number of milliseconds >= 0");
  return options;
}

function described(call: Attempt): string {
  const what =
    call.kind === "tool"
      ? `${toolCallLabel(call)} ${call.attemptId}`
      : `model call ${call.attemptId}`;
  return `${what} on run ${call.runId}`;
}

/**
 * What the bound reports, once it passes: the first error a close met, if one did (the run is
 * stopped); else `unresolved-attempt` naming every call still in flight on a child run whose
 * close waits for it (the first as the error's `attempt`, all of them in `details.inFlight`);
 * else, with no call in flight there, the ledger has not confirmed a write in time:
 * `store-unavailable`.
 */
function stoppedWaiting(state: AdapterState, why: string, cause: unknown): unknown {
  const { runIds, inFlight: inside, failure } = state.closesPending;
  if (failure !== undefined) return failure;
  const inFlight = [...state.openStreams, ...inside];
  const [first] = inFlight;
  if (first === undefined)
    return new StoreUnavailableError(
      `innerCallsSettled stopped waiting (${why}): the ledger has not confirmed the outcomes or the closes of child run${runIds.length === 1 ? "" : "s"} ${runIds.join(", ")}`,
      cause,
    );
  const error = new UnresolvedAttemptError(
    `innerCallsSettled stopped waiting (${why}): ${inFlight.map(described).join(", ")} still in flight: streams not read to their end yet, or calls made inside tool calls that returned without waiting for them. The ledger keeps them in flight: an answer that comes is still recorded (while this process runs), and a resume of the run in another process abandons them`,
    {
      attemptId: first.attemptId,
      runId: first.runId,
      inFlight: inFlight.map((call) => ({
        runId: call.runId,
        attemptId: call.attemptId,
        kind: call.kind,
        ...(call.name !== undefined ? { name: call.name } : {}),
        ...(call.toolCallId !== undefined ? { toolCallId: call.toolCallId } : {}),
      })),
    },
    first,
  );
  if (cause !== undefined)
    Object.defineProperty(error, "cause", { value: cause, configurable: true, writable: true });
  return error;
}

/**
 * Resolves once the run's streams still open (one the SDK drains after its consumer stopped
 * reading) have their outcomes recorded, and the calls `recorder`'s wrapped tools made inside
 * and left in flight when they returned (a call raced against a timeout) have theirs, and the
 * child runs holding them are closed; rejects with the ledger's error if one could not be recorded (the
 * run is then stopped too). Await it before closing the store or ending the process.
 *
 * A call that never answers would keep it waiting for good: `timeoutMs` and `signal` bound the
 * wait. Once one passes, it rejects with `unresolved-attempt` naming the calls still in flight
 * (`details.inFlight`; the first is `attempt`). Only the wait stops: the calls stay in flight in
 * the ledger, which is the truth (they went out and did not come back), and an answer that comes
 * later in this process is still recorded and its child run closed.
 */
export async function innerCallsSettled(options: InnerCallsSettledOptions): Promise<void> {
  const { recorder, signal, timeoutMs } = checked(options);
  const state = adapterStateOf(recorder);
  // The run's own streams first (one the SDK drains after a break out of fullStream): the
  // run may be closed once this resolves.
  const pending = state.openStreams.length > 0 || state.closesPending.runIds.length > 0;
  const settled = state.streamsSettled().then(() => state.closesSettled());
  if ((signal === undefined && timeoutMs === undefined) || !pending) return settled;
  // The bound only stops this wait; the closes go on, and their failure is reported by them.
  settled.catch(() => undefined);
  return new Promise<void>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const stop = (why: string, cause?: unknown) => {
      done();
      reject(stoppedWaiting(state, why, cause));
    };
    const onAbort = () => stop("its signal aborted", signal?.reason);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs !== undefined) timer = setTimeout(() => stop(`after ${timeoutMs} ms`), timeoutMs);
    settled.then(
      () => {
        done();
        resolve();
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
