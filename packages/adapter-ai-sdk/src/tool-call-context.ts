import { AsyncLocalStorage } from "node:async_hooks";
import type { Attempt, ReplayedOutcome, SessionRecorder } from "@agent-ledger/core";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { rebuildError } from "./replayed-errors.js";

/** How a wrapped tool's call ended, as its outcome was recorded. */
export type ToolCallOutcome =
  | { failed: false }
  | { failed: true; error: unknown }
  | { abandoned: string };

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
 * else this time (fail, or ask something new), which the closed run could not take.
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
    // A run the ledger stopped refuses the calls of its tools too.
    root.assertOpen();
    this.#state.assertOpen();
    if (!this.#inner) {
      const recorder: SessionRecorder = this.#state.recorder.child({
        actor: this.#state.recorder.actor,
        causedByEventId: this.#attempt.requestedEventId,
      });
      this.#inner = adapterStateOf(recorder);
      this.#inner.ofToolCall();
    }
    return this.#inner;
  }

  /**
   * Before the tool's outcome is recorded: an inner stream the tool left unread is recorded as
   * failed (it was paid for, and its run is about to close). A child run the ledger stopped (a
   * divergence, a store down) stops the tool's run too, and the tool's outcome is not recorded:
   * it would be the ledger's error, answered from the ledger on every later resume.
   */
  async beforeOutcome(): Promise<void> {
    const inner = this.#inner;
    if (inner)
      await inner.abandonOpenStreams("the tool returned before reading the stream to its end");
    try {
      // A sibling's refusal (an unresolved call next to this one) blocks the run, and this
      // tool's inner call may have thrown it: neither is this tool's answer.
      this.#root.assertOpen();
      this.#state.assertOpen();
      inner?.assertOpen();
    } catch (error) {
      this.#state.block(error);
      throw error;
    }
  }

  /**
   * Closes the child run, if an inner call made one, once the tool's outcome is recorded: as
   * completed, or failed with the tool's error. A child run adopted closed (recorded before
   * this order, by an earlier version) keeps its end.
   */
  async close(outcome: ToolCallOutcome): Promise<void> {
    const inner = this.#inner;
    if (inner?.recorder.status !== "running") return;
    await closeChild(this.#state, inner.recorder, outcome);
  }
}

async function closeChild(
  state: AdapterState,
  child: SessionRecorder,
  outcome: ToolCallOutcome,
): Promise<void> {
  await state.settle(
    "abandoned" in outcome
      ? child.cancelRun(outcome.abandoned)
      : outcome.failed
        ? child.failRun(outcome.error)
        : child.completeRun(),
  );
}

/**
 * On resume, a tool call answered from the ledger whose child run is still open (the process
 * died after the tool's outcome, before the child run's end) has it closed now, as the call
 * ended. `state` is the state the call is recorded on.
 */
export async function closeLeftOpen(
  state: AdapterState,
  attempt: Attempt,
  replayed: ReplayedOutcome,
): Promise<void> {
  const open = await state.openChildRuns();
  if (open.size === 0) return;
  // Adopts the recorded child run of this call (by its cause), if it made one.
  const child = state.recorder.child({
    actor: state.recorder.actor,
    causedByEventId: attempt.requestedEventId,
  });
  if (!open.has(child.runId)) return;
  await closeChild(
    state,
    child,
    replayed.status === "completed"
      ? { failed: false }
      : replayed.status === "failed"
        ? { failed: true, error: rebuildError(replayed.error) }
        : { abandoned: replayed.reason },
  );
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
