import { InvalidArgumentError } from "@agent-ledger/core";
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";
import {
  checkedEffects,
  checkedOptional,
  checkedOptions,
  checkedToolNames,
  checkedToolSet,
} from "./adapter-options.js";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import {
  callStateOf,
  inToolCall,
  inToolCallIterable,
  ToolCallContext,
} from "./tool-call-context.js";
import { leaveUndecided, recordFailed, recordResult, replayedOutput } from "./tool-call-outcome.js";
import { startCall } from "./tool-call-start.js";
import { wrapCallbacks } from "./wrap-tool-callbacks.js";
import {
  named,
  type ToolOptions,
  WRAP_TOOLS_OPTIONS,
  type WrapToolsOptions,
} from "./wrap-tools-options.js";

export type {
  UnresolvedDecision,
  UnresolvedToolCall,
  WrapToolsOptions,
} from "./wrap-tools-options.js";

/** As the SDK decides whether `execute` streams (provider-utils' `isAsyncIterable`). */
function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value != null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
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
        // Stopped by its caller, the tool's outcome is unknown: no definite failure.
        if (executeOptions.abortSignal?.aborted) leaveUndecided(state, attempt);
        else await recordFailed(state, context, attempt, error);
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
        // Stopped by its caller, the tool's outcome is unknown: no definite failure.
        if (executeOptions.abortSignal?.aborted) leaveUndecided(state, attempt);
        else await recordFailed(state, context, attempt, error);
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
 * The tools `wrapTools` returned: given to it again (a route that wraps the tools it was handed,
 * wrapped already), each call would be recorded twice, the second on a child run of the first,
 * and a crash would leave two unresolved attempts for each effect.
 */
const wrappedTools = new WeakSet<object>();

/** `invalid-argument` at `$.tools.<name>` for the first of `tools` that `wrapTools` returned. */
function refuseWrappedAgain(tools: Record<string, Tool>): void {
  for (const [name, tool] of Object.entries(tools))
    if (wrappedTools.has(tool))
      throw new InvalidArgumentError(
        `$.tools.${name}`,
        `tool ${name} is one wrapTools returned already: wrapped again, each of its calls would be recorded twice. Pass wrapTools the tools as you defined them, once per tool set (wrap the same tools again for another recorder, not the wrapped ones)`,
      );
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
  refuseWrappedAgain(tools as Record<string, Tool>);
  const state = adapterStateOf(checked.recorder);
  const wrapped: Record<string, Tool> = {};
  for (const [name, tool] of Object.entries(tools) as [string, Tool][]) {
    const { execute } = tool;
    const toolOptions: ToolOptions =
      tool.type === "provider" ? { ...wrapOptions, toolType: "extension" } : wrapOptions;
    // A denied call of the tool (its approval request answered no) is recorded with these too.
    state.toolOptions.set(name, toolOptions);
    const { wrapped: callbacks, input } = wrapCallbacks(state, tool);
    if (input) state.inputCallbackTools.add(name);
    if (execute === undefined) {
      wrapped[name] =
        Object.keys(callbacks).length > 0 ? ({ ...tool, ...callbacks } as Tool) : tool;
      continue;
    }
    // Decided before the call: the SDK looks at what execute returns at once (see `streaming`).
    const streams = isAsyncGeneratorFunction(execute) || named(streaming, name);
    wrapped[name] = {
      ...tool,
      ...callbacks,
      execute: streams
        ? wrapStreamingExecute(state, toolOptions, name, execute)
        : wrapExecute(state, toolOptions, name, execute),
    } as Tool;
  }
  // A tool passed through as it was (no execute, no callback to wrap) is not marked: wrapping
  // the same tools for another recorder passes it through again.
  for (const [name, tool] of Object.entries(wrapped))
    if (tool !== (tools as Record<string, Tool>)[name]) wrappedTools.add(tool);
  return wrapped as TOOLS;
}
