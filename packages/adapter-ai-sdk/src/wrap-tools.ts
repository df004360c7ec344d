import {
  type Attempt,
  InvalidArgumentError,
  type KnownKeys,
  LedgerError,
  type SessionRecorder,
  type ToolCallEnd,
  type ToolEffect,
  type UnresolvedAttemptError,
} from "@agent-ledger/core";
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";
import {
  checkedEffects,
  checkedOptional,
  checkedOptions,
  checkedToolNames,
  checkedToolSet,
} from "./adapter-options.js";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { closeLeftOpen, outcomeOfReplayed } from "./child-run-end.js";
import { toJsonValue } from "./plain-json.js";
import {
  AttemptAbandonedError,
  rebuildToolFailure,
  toolFailureMetadataOf,
} from "./replayed-errors.js";
import {
  callStateOf,
  inToolCall,
  inToolCallIterable,
  ToolCallContext,
} from "./tool-call-context.js";
import { inToolCallback } from "./tool-callback-context.js";
import { decodeToolOutput, encodeToolOutput } from "./tool-output.js";

/** A tool call that was in flight when the process died and is not declared idempotent. */
export interface UnresolvedToolCall {
  name: string;
  toolCallId: string;
  input: unknown;
  /** The recorded attempt: it may or may not have had its effect. */
  attempt: Attempt;
  error: UnresolvedAttemptError;
}

/** What a person (or policy) decided about an unresolved tool call. */
export type UnresolvedDecision = { action: "retry" } | { action: "abandon"; reason: string };

export interface WrapToolsOptions {
  recorder: SessionRecorder;
  /** Tools safe to run again after a crash (by name, or a predicate). */
  idempotent?: readonly string[] | ((name: string) => boolean);
  /** The effect kind of each tool (`none`, `read`, `write`, `unknown`; default unknown). */
  effects?: Record<string, ToolEffect["kind"]>;
  /**
   * Tools whose `execute` returns an AsyncIterable (preliminary results, the last one the
   * result) without being an `async function*`, e.g. `({ q }) => progress(q)` (by name, or a
   * predicate). The SDK streams whatever `execute` returns synchronously; the wrapper must
   * answer before it calls `execute`, which it does only once the request is committed, so it
   * cannot look first. An `async function*` needs no declaring.
   */
  streaming?: readonly string[] | ((name: string) => boolean);
  /**
   * Asked when a resumed run meets a tool call that was in flight at the crash and is not
   * idempotent. Without it the run stops with `unresolved-attempt`. `retry` runs the tool again
   * (recorded with retryOf); `abandon` records the decision and tells the model the call failed.
   */
  onUnresolved?: (call: UnresolvedToolCall) => Promise<UnresolvedDecision> | UnresolvedDecision;
}

/** What `wrapTools` refuses any other option key against. */
const WRAP_TOOLS_OPTIONS: KnownKeys<WrapToolsOptions> = {
  recorder: true,
  idempotent: true,
  effects: true,
  streaming: true,
  onUnresolved: true,
};

function named(names: WrapToolsOptions["idempotent"], name: string): boolean {
  if (typeof names === "function") return names(name);
  return names?.includes(name) ?? false;
}

/** As the SDK decides whether `execute` streams (provider-utils' `isAsyncIterable`). */
function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value != null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

/** onUnresolved's answer, checked when it is read: anything else would be taken as one of them. */
function checkedDecision(decision: unknown): UnresolvedDecision {
  const answer = decision as { action?: unknown; reason?: unknown } | null | undefined;
  if (answer?.action === "retry") return { action: "retry" };
  if (answer?.action === "abandon" && typeof answer.reason === "string" && answer.reason !== "")
    return { action: "abandon", reason: answer.reason };
  let given: string;
  try {
    given = JSON.stringify(decision) ?? String(decision);
  } catch {
    given = String(decision);
  }
  throw new InvalidArgumentError(
    "$.onUnresolved",
    `onUnresolved answered ${given}: expected { action: "retry" } or { action: "abandon", reason } with a non-empty reason`,
  );
}

/**
 * A tool's options as its wrapper records its calls: `wrapTools`' options, and `extension` for
 * a provider-defined tool (`type: "provider"`, its schema the provider's: Anthropic's bash or
 * computer use...), noted in each request's metadata (`toolType`), which the OpenTelemetry
 * export gives as `gen_ai.tool.type` (an app's own tool is a `function`).
 */
type ToolOptions = WrapToolsOptions & { toolType?: "extension" };

/** Commits `tool.requested` (or finds the call in the ledger on resume). */
async function beginToolCall(
  state: AdapterState,
  options: ToolOptions,
  call: { name: string; input: unknown; toolCallId: string; causedByEventId: string | undefined },
): Promise<Attempt> {
  const { recorder } = state;
  const { causedByEventId } = call;
  // The SDK may run a tool before any model call (an approved call continued in a new run).
  await state.ensureStarted();
  const effect: ToolEffect = {
    // Own keys only: a tool named "toString" has no effect declared by Object.prototype.
    kind:
      (options.effects && Object.hasOwn(options.effects, call.name)
        ? options.effects[call.name]
        : undefined) ?? "unknown",
    idempotent: named(options.idempotent, call.name),
  };
  try {
    return await recorder.beforeToolCall({
      toolCallId: call.toolCallId,
      name: call.name,
      args: toJsonValue(call.input, "$.args"),
      effect,
      ...(causedByEventId !== undefined ? { causedByEventId } : {}),
      ...(options.toolType !== undefined ? { metadata: { toolType: options.toolType } } : {}),
    });
  } catch (error) {
    if (LedgerError.isInstance(error, "unresolved-attempt") && options.onUnresolved) {
      const unresolved = error as UnresolvedAttemptError & { attempt: Attempt };
      const decision = checkedDecision(
        await options.onUnresolved({
          name: call.name,
          toolCallId: call.toolCallId,
          input: call.input,
          attempt: unresolved.attempt,
          error: unresolved,
        }),
      );
      if (decision.action === "retry") return recorder.retry(unresolved.attempt);
      await recorder.abandon(unresolved.attempt, decision.reason);
      // The call will not run again: what it left in flight inside is abandoned with it.
      await closeLeftOpen(state, unresolved.attempt, { abandoned: decision.reason });
      throw new AttemptAbandonedError(`tool call ${call.name}`, decision.reason);
    }
    // The call is not durable (store down, divergence, unresolved): the run stops here.
    state.block(error);
    throw error;
  }
}

/** Commits the request; a call that cannot be recorded stops the run (unless abandoned). */
async function startCall(
  state: AdapterState,
  options: ToolOptions,
  name: string,
  input: unknown,
  executeOptions: ToolExecutionOptions,
): Promise<Attempt> {
  state.assertOpen();
  const { toolCallId } = executeOptions;
  // A streamed call waits until the completion that asked for it is committed. If the model
  // call failed instead (an error part such as "Overloaded": the SDK reads on and still runs
  // the calls that arrive), the tool does not run and the SDK hands the model's error on as
  // its tool error. That failure is the model's and is recorded: it must not stop the run.
  // (A completion the ledger could not commit has already stopped it, in the middleware.)
  const causedByEventId = await state.causeOf(toolCallId);
  try {
    return await beginToolCall(state, options, { name, input, toolCallId, causedByEventId });
  } catch (error) {
    if (error instanceof AttemptAbandonedError) throw error;
    state.block(error);
    throw error;
  }
}

/**
 * On resume: the recorded result (`{ output }`), or the recorded error thrown again. A child
 * run the call left open (the process died between its outcome and the child run's end, or a
 * person abandoned the call) is closed first, the calls it holds in flight abandoned.
 */
async function replayedOutput(
  state: AdapterState,
  attempt: Attempt,
  name: string,
): Promise<{ output: unknown } | undefined> {
  const replayed = attempt.replayed;
  if (replayed === undefined) return undefined;
  // A failure stops the run: handed to the SDK, the error would be the tool's result for the
  // model, against the recorded one. The next resume closes the child run.
  await closeLeftOpen(state, attempt, outcomeOfReplayed(replayed));
  if (replayed.status === "completed")
    return { output: decodeToolOutput(replayed.result, replayed.metadata) };
  if (replayed.status === "failed") throw rebuildToolFailure(replayed.error, replayed.metadata);
  throw new AttemptAbandonedError(`tool call ${name}`, replayed.reason);
}

/**
 * Records the result, and returns the outcome recorded: completed, or failed with a
 * `non-serializable` error (the tool ran, but its result cannot be recorded: the SDK hands the
 * model this error, and the ledger says so; left unresolved, a resume would treat it as in
 * flight). An outcome the ledger cannot take stops the run (thrown).
 */
async function recordOutput(
  state: AdapterState,
  attempt: Attempt,
  output: unknown,
): Promise<ToolCallEnd> {
  try {
    const { result, metadata } = encodeToolOutput(output);
    await state.recorder.toolCompleted(attempt, result, metadata ? { metadata } : {});
    return { failed: false };
  } catch (error) {
    if (!LedgerError.isInstance(error, "non-serializable")) {
      state.block(error);
      throw error;
    }
    await state.settle(state.recorder.toolFailed(attempt, error));
    return { failed: true, error };
  }
}

/**
 * Records the tool's failure, then closes its child run. If the failure cannot be recorded
 * the child run stays open (the call runs again on resume, and adopts it) and the run stops.
 */
async function recordFailed(
  state: AdapterState,
  context: ToolCallContext,
  attempt: Attempt,
  error: unknown,
): Promise<void> {
  await context.beforeOutcome();
  const metadata = toolFailureMetadataOf(error);
  await state.settle(state.recorder.toolFailed(attempt, error, metadata ? { metadata } : {}));
  await context.close({ failed: true, error });
}

/** Records the tool's result, then closes its child run; throws a result it cannot record. */
async function recordResult(
  state: AdapterState,
  context: ToolCallContext,
  attempt: Attempt,
  output: unknown,
): Promise<void> {
  await context.beforeOutcome();
  const outcome = await recordOutput(state, attempt, output);
  await context.close(outcome);
  if ("failed" in outcome && outcome.failed) throw outcome.error;
}

function wrapExecute(
  root: AdapterState,
  options: ToolOptions,
  name: string,
  execute: NonNullable<Tool["execute"]>,
) {
  return async (input: unknown, executeOptions: ToolExecutionOptions): Promise<unknown> => {
    // Called inside one of the same recorder's wrapped tools (a sub-agent's tool), the call is
    // recorded on that tool call's child run, beside the completion that asked for it.
    const state = callStateOf(root);
    // In flight on that run until its outcome is recorded: the run is not closed before.
    const ended = state.callBegan();
    let toolEnded: (() => void) | undefined;
    try {
      const attempt = await startCall(state, options, name, input, executeOptions);
      const replayed = await replayedOutput(state, attempt, name);
      if (replayed) return replayed.output;
      toolEnded = state.toolBegan(attempt);
      const context = new ToolCallContext(root, state, attempt);
      let output: unknown;
      try {
        const returned = inToolCall(context, () => execute(input as never, executeOptions));
        if (isAsyncIterable(returned)) {
          // A function not declared `streaming` returned preliminary results: this wrapper has
          // answered the SDK with a promise already, so they cannot be streamed; the last value
          // is the result, as the SDK would have taken it.
          for await (const value of inToolCallIterable(context, returned)) output = value;
        } else output = await returned;
      } catch (error) {
        await recordFailed(state, context, attempt, error);
        throw error;
      }
      await recordResult(state, context, attempt, output);
      return output;
    } finally {
      toolEnded?.();
      ended();
    }
  };
}

/**
 * A streaming tool (`async *execute`, or declared `streaming`): the SDK streams each value as a
 * preliminary result and takes the last as the result, so the wrapper is a generator too,
 * passing each value on as it comes and recording the last. A replayed call yields its recorded
 * result once, as does a declared tool whose `execute` returned a single value.
 */
function wrapStreamingExecute(
  root: AdapterState,
  options: ToolOptions,
  name: string,
  execute: NonNullable<Tool["execute"]>,
) {
  return async function* (input: unknown, executeOptions: ToolExecutionOptions) {
    // Called inside one of the same recorder's wrapped tools (a sub-agent's tool), the call is
    // recorded on that tool call's child run, beside the completion that asked for it.
    const state = callStateOf(root);
    // In flight on that run until its outcome is recorded: the run is not closed before.
    const ended = state.callBegan();
    let toolEnded: (() => void) | undefined;
    try {
      const attempt = await startCall(state, options, name, input, executeOptions);
      const replayed = await replayedOutput(state, attempt, name);
      if (replayed) {
        yield replayed.output;
        return;
      }
      toolEnded = state.toolBegan(attempt);
      const context = new ToolCallContext(root, state, attempt);
      let last: unknown;
      try {
        const returned = inToolCall(context, () => execute(input as never, executeOptions));
        if (isAsyncIterable(returned)) {
          for await (const value of inToolCallIterable(context, returned)) {
            last = value;
            yield value;
          }
        } else {
          last = await returned;
          yield last;
        }
      } catch (error) {
        await recordFailed(state, context, attempt, error);
        throw error;
      }
      await recordResult(state, context, attempt, last);
    } finally {
      toolEnded?.();
      ended();
    }
  };
}

/**
 * The tool's callbacks that `streamText` awaits at its stream's parts before it reads the
 * stream on, run so that a model call they make through the same recorder's middleware is
 * known as theirs and recorded as the run's next call (see `AgentCallClaims`): `onInputStart`
 * and `onInputDelta` at the tool call's input parts (`input`: whether the tool has one, whose
 * calls' input parts a stream's completion keeps), `onInputAvailable` and `needsApproval` (a
 * function; `true` / `false` are kept as they are) at its tool-call part. Each runs with the
 * SDK's toolCallId; `this` is whatever the SDK calls it on, as unwrapped.
 */
function wrapCallbacks(root: AdapterState, tool: Tool): { wrapped: Partial<Tool>; input: boolean } {
  const { onInputStart, onInputDelta, onInputAvailable, needsApproval } = tool;
  const wrapped: Partial<Tool> = {};
  if (onInputStart)
    wrapped.onInputStart = function (this: unknown, options) {
      const callback = { part: "tool-input", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputStart.call(this, options));
    };
  if (onInputDelta)
    wrapped.onInputDelta = function (this: unknown, options) {
      const callback = { part: "tool-input", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputDelta.call(this, options));
    };
  if (onInputAvailable)
    wrapped.onInputAvailable = function (this: unknown, options) {
      const callback = { part: "tool-call", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputAvailable.call(this, options));
    };
  if (typeof needsApproval === "function")
    wrapped.needsApproval = function (this: unknown, input, options) {
      const callback = { part: "tool-call", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => needsApproval.call(this, input, options));
    };
  return { wrapped, input: onInputStart !== undefined || onInputDelta !== undefined };
}

function isAsyncGeneratorFunction(execute: unknown): boolean {
  return Object.prototype.toString.call(execute) === "[object AsyncGeneratorFunction]";
}

/**
 * Wraps each tool's `execute` so that every call is recorded: `tool.requested` (with the SDK's
 * toolCallId, the completion that asked for it, and its effect) is committed before the tool
 * runs, then `tool.completed` or `tool.failed` (the error is rethrown; the SDK turns it into a
 * tool-error part). If the ledger cannot take the request the tool does not run, and the next
 * model call is refused, which stops the run. On resume, recorded calls are answered from the
 * ledger. Bad options are refused here (`invalid-argument`, with the option's path), among
 * them an option it does not take and a tool name in `idempotent`, `effects` or `streaming`
 * that is not in `tools`. Each tool's `onInputStart`, `onInputDelta`, `onInputAvailable` and
 * `needsApproval` (a function) are wrapped too, so that a model call they make is recorded in
 * its place (see `wrapCallbacks`).
 */
export function wrapTools<TOOLS extends ToolSet>(tools: TOOLS, options: WrapToolsOptions): TOOLS {
  // The tool set is `$.tools`, beside the options' keys (`$` is the options object), as core
  // names a store given beside its options `$.store`.
  const names = checkedToolSet(tools, "$.tools");
  const checked = checkedOptions<WrapToolsOptions>(options, WRAP_TOOLS_OPTIONS, "wrapTools");
  const idempotent = checkedToolNames(checked.idempotent, "$.idempotent", names);
  const effects = checkedEffects(checked.effects, "$.effects", names);
  const streaming = checkedToolNames(checked.streaming, "$.streaming", names);
  checkedOptional(checked.onUnresolved, "$.onUnresolved", "function");
  const wrapOptions: WrapToolsOptions = {
    recorder: checked.recorder,
    ...(idempotent !== undefined ? { idempotent } : {}),
    ...(effects !== undefined ? { effects } : {}),
    ...(checked.onUnresolved !== undefined ? { onUnresolved: checked.onUnresolved } : {}),
  };
  const state = adapterStateOf(checked.recorder);
  const wrapped: Record<string, Tool> = {};
  for (const [name, tool] of Object.entries(tools) as [string, Tool][]) {
    const { execute } = tool;
    const { wrapped: callbacks, input } = wrapCallbacks(state, tool);
    if (input) state.inputCallbackTools.add(name);
    if (execute === undefined) {
      wrapped[name] =
        Object.keys(callbacks).length > 0 ? ({ ...tool, ...callbacks } as Tool) : tool;
      continue;
    }
    // Decided before the call: the SDK looks at what execute returns at once (see `streaming`).
    const streams = isAsyncGeneratorFunction(execute) || named(streaming, name);
    const toolOptions: ToolOptions =
      tool.type === "provider" ? { ...wrapOptions, toolType: "extension" } : wrapOptions;
    wrapped[name] = {
      ...tool,
      ...callbacks,
      execute: streams
        ? wrapStreamingExecute(state, toolOptions, name, execute)
        : wrapExecute(state, toolOptions, name, execute),
    } as Tool;
  }
  return wrapped as TOOLS;
}
