import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attempt,
  closeAsCallEnded,
  LedgerError,
  type SessionRecorder,
  type ToolCallEnd,
} from "@agent-ledger/core";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { closingLater } from "./closing-children.js";

/**
 * A wrapped tool's call while its `execute` runs. A model the tool calls through the same
 * recorder's middleware (an LLM inside a tool), and a wrapped tool of the same recorder it calls
 * (a sub-agent's), is recorded on a child run of this call, made at its first inner call: the
 * run's own calls then stay in the order its agent makes them (the core replays them strictly
 * in that order, and a tool answered from the ledger on resume makes no inner call). On resume,
 * a tool run again (idempotent, or retried) adopts the child run by its cause, so the inner
 * calls recorded before the crash are answered too, each by its request: a tool may make them
 * at once (`AdapterState.ofToolCall`).
 *
 * The tool's outcome is committed before the child run is closed: a crash between the two
 * leaves a child run open under a call the ledger answers (closed on resume, see
 * `closeLeftOpen`), never a closed child run under a call that runs again and may do something
 * else this time (fail, or ask something new), which the closed run could not take. A call the
 * tool made there and did not wait for (raced against a timeout) was paid for: the child run
 * closes once its answer is recorded, in the background, so the agent goes on at once.
 */
export class ToolCallContext {
  /** The recorder's own state: the one its middleware and wrappers hold. */
  readonly #root: AdapterState;
  /** The state the tool's call is recorded on: the root's, or an outer tool call's child run's. */
  readonly #state: AdapterState;
  readonly #attempt: Attempt;
  /** The tool call this one runs inside (a sub-agent's tool), if any. */
  readonly #outer: ToolCallContext | undefined;
  #inner: AdapterState | undefined;
  /**
   * The error an inner call of the tool was refused with because the run (or its caller's) had
   * stopped: what the tool ends with then is no answer of its own (see `beforeOutcome`).
   */
  #refused: { error: unknown } | undefined;

  constructor(root: AdapterState, state: AdapterState, attempt: Attempt) {
    this.#root = root;
    this.#state = state;
    this.#attempt = attempt;
    this.#outer = current.getStore();
  }

  /** The state calls of `root`'s middleware and wrappers use here: this call's child run's. */
  stateFor(root: AdapterState): AdapterState {
    // Another recorder's calls are its own, or those of a tool of it this call runs inside.
    if (root !== this.#root) return this.#outer?.stateFor(root) ?? root;
    // A run the ledger stopped refuses the calls of its tools too, unless it stopped only
    // because a sibling call waits on a person (`unresolved-attempt`): the ledger takes writes,
    // and that stop is for the agent's next model call. A tool call already running beside it
    // (idempotent, or approved) asks its model and is recorded as it ends; refused, it would be
    // left in flight and run again by every resume until the person decides.
    try {
      assertOpenForTools(root);
      assertOpenForTools(this.#state);
    } catch (error) {
      this.#refused ??= { error };
      throw error;
    }
    if (!this.#inner) {
      const recorder: SessionRecorder = this.#state.recorder.child({
        actor: this.#state.recorder.actor,
        causedByEventId: this.#attempt.requestedEventId,
      });
      this.#inner = adapterStateOf(recorder);
      this.#inner.ofToolCall(this.#root);
    }
    return this.#inner;
  }

  /**
   * Before the tool's outcome is recorded: an inner stream the tool left unread is recorded as
   * failed (it was paid for, and its run is about to close). The outcome is then recorded,
   * whatever stopped the run meanwhile (a sibling call refused as unresolved, a request the
   * ledger could not take): the tool ran, and left unrecorded it would be "may or may not have
   * happened", run again on resume (or twice, once a person approves it). The stop applies to
   * what comes next: the agent's next model call is refused.
   *
   * Unless the ledger refused a call the tool made inside: its child run stopped (a divergence,
   * a store down), or its inner call was refused because the run had stopped. What the tool
   * ends with then (that error, or what it made of it) is no answer of its own, and would be
   * answered from the ledger on every later resume: nothing is recorded, the tool's run stops,
   * and the call runs again on resume (if idempotent, else a person decides).
   */
  async beforeOutcome(): Promise<void> {
    const inner = this.#inner;
    if (inner)
      await inner.abandonOpenStreams("the tool returned before reading the stream to its end");
    const refused =
      this.#refused ?? (inner?.blocked !== undefined ? { error: inner.blocked } : undefined);
    if (refused === undefined) return;
    this.#state.block(refused.error);
    throw refused.error;
  }

  /**
   * Closes the child run, if an inner call made one, once the tool's outcome is recorded: as
   * completed, or failed with the tool's error. A child run adopted closed (recorded before
   * this order, by an earlier version) keeps its end. With calls still in flight on it, it is
   * closed once they have their outcomes (`#closeOnceSettled`), and this returns at once.
   */
  async close(outcome: ToolCallEnd): Promise<void> {
    const inner = this.#inner;
    if (inner?.recorder.status !== "running") return;
    if (inner.callsInFlight) {
      const closing = this.#closeOnceSettled(inner, outcome);
      closingLater(inner.recorder, closing);
      this.#root.closeLater(inner, closing);
    } else await this.#state.settle(closeAsCallEnded(inner.recorder, outcome));
  }

  /**
   * Waits for the calls in flight on the child run `inner` (their outcomes recorded), then
   * closes it. An outcome the ledger could not take leaves its call in flight: the child run
   * then stays open (the next resume abandons the call and closes it) and the tool's run stops.
   */
  async #closeOnceSettled(inner: AdapterState, outcome: ToolCallEnd): Promise<void> {
    await inner.callsSettled();
    if (inner.blocked !== undefined) {
      this.#state.block(inner.blocked);
      throw inner.blocked;
    }
    await this.#state.settle(closeAsCallEnded(inner.recorder, outcome));
  }
}

/** `state.assertOpen()`, but for a stop by a call that waits on a person (see `stateFor`). */
function assertOpenForTools(state: AdapterState): void {
  if (!LedgerError.isInstance(state.blocked, "unresolved-attempt")) state.assertOpen();
}

const current = new AsyncLocalStorage<ToolCallContext>();

/** Runs `body` (a tool's `execute`, or one step of its iterator) as part of `context`'s call. */
export function inToolCall<T>(context: ToolCallContext, body: () => T): T {
  return current.run(context, body);
}

/**
 * The state a call of `state`'s middleware or wrappers records with, where it is made: inside
 * one of its wrapped tools, that tool call's child run's.
 */
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
