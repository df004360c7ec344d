import { AsyncLocalStorage } from "node:async_hooks";
import type { Attempt, SessionRecorder } from "@agent-ledger/core";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";

/**
 * A wrapped tool's call while its `execute` runs. A model the tool calls through the same
 * recorder's middleware (an LLM inside a tool) is recorded on a child run of this call, made
 * at its first inner call: the run's own model calls then stay in the order its agent makes
 * them (the core replays them strictly in that order, and a tool answered from the ledger on
 * resume makes no inner call). On resume, a tool run again (idempotent, or retried) adopts
 * the child run by its cause, so the inner calls recorded before the crash are answered too,
 * each by its request: a tool may make them at once (`AdapterState.ofToolCall`).
 */
export class ToolCallContext {
  readonly #state: AdapterState;
  readonly #attempt: Attempt;
  #inner: AdapterState | undefined;

  constructor(state: AdapterState, attempt: Attempt) {
    this.#state = state;
    this.#attempt = attempt;
  }

  /** The state model calls of `state`'s middleware use here: the child run's, if this tool's. */
  stateFor(state: AdapterState): AdapterState {
    if (state !== this.#state) return state;
    // A run the ledger stopped refuses the calls of its tools too.
    state.assertOpen();
    if (!this.#inner) {
      const recorder: SessionRecorder = state.recorder.child({
        actor: state.recorder.actor,
        causedByEventId: this.#attempt.requestedEventId,
      });
      this.#inner = adapterStateOf(recorder);
      this.#inner.ofToolCall();
    }
    return this.#inner;
  }

  /**
   * Closes the child run, if an inner call made one, before the tool's outcome is recorded: as
   * completed, or failed with the tool's error. A child run the ledger stopped (a divergence,
   * a store down) stops the tool's run too, and the tool's outcome is not recorded: it would
   * be the ledger's error, answered from the ledger on every later resume.
   */
  async close(outcome: { failed: false } | { failed: true; error: unknown }): Promise<void> {
    const inner = this.#inner;
    if (!inner) return;
    try {
      inner.assertOpen();
      if (outcome.failed) await inner.recorder.failRun(outcome.error);
      else await inner.recorder.completeRun();
    } catch (error) {
      this.#state.block(error);
      throw error;
    }
  }
}

const current = new AsyncLocalStorage<ToolCallContext>();

/** Runs `body` (a tool's `execute`, or one step of its iterator) as part of `context`'s call. */
export function inToolCall<T>(context: ToolCallContext, body: () => T): T {
  return current.run(context, body);
}

/** The state a model call of `state`'s middleware records with, where it is made. */
export function callStateOf(state: AdapterState): AdapterState {
  return current.getStore()?.stateFor(state) ?? state;
}

/** `iterable` (a streaming tool's result) read step by step as part of `context`'s call. */
export async function* inToolCallIterable<T>(
  context: ToolCallContext,
  iterable: AsyncIterable<T>,
): AsyncGenerator<T> {
  // A generator's body runs in the context of whoever calls next(): the SDK, outside the tool.
  const iterator = inToolCall(context, () => iterable[Symbol.asyncIterator]());
  let done = false;
  try {
    while (true) {
      const step = await inToolCall(context, () => iterator.next());
      if (step.done) {
        done = true;
        return;
      }
      yield step.value;
    }
  } finally {
    if (!done) await inToolCall(context, async () => iterator.return?.());
  }
}
