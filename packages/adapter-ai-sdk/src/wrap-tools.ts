import {
  type Attempt,
  LedgerError,
  type SessionRecorder,
  type ToolEffect,
  type UnresolvedAttemptError,
} from "@agent-ledger/core";
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { toJsonValue } from "./plain-json.js";
import { AttemptAbandonedError, rebuildError } from "./replayed-errors.js";
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
   * Asked when a resumed run meets a tool call that was in flight at the crash and is not
   * idempotent. Without it the run stops with `unresolved-attempt`. `retry` runs the tool again
   * (recorded with retryOf); `abandon` records the decision and tells the model the call failed.
   */
  onUnresolved?: (call: UnresolvedToolCall) => Promise<UnresolvedDecision> | UnresolvedDecision;
}

function isIdempotent(options: WrapToolsOptions, name: string): boolean {
  const { idempotent } = options;
  if (typeof idempotent === "function") return idempotent(name);
  return idempotent?.includes(name) ?? false;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}

/** Commits `tool.requested` (or finds the call in the ledger on resume). */
async function beginToolCall(
  state: AdapterState,
  options: WrapToolsOptions,
  call: { name: string; input: unknown; toolCallId: string; causedByEventId: string | undefined },
): Promise<Attempt> {
  const { recorder } = state;
  const { causedByEventId } = call;
  // The SDK may run a tool before any model call (an approved call continued in a new run).
  await state.ensureStarted();
  const effect: ToolEffect = {
    kind: options.effects?.[call.name] ?? "unknown",
    idempotent: isIdempotent(options, call.name),
  };
  try {
    return await recorder.beforeToolCall({
      toolCallId: call.toolCallId,
      name: call.name,
      args: toJsonValue(call.input, "$.args"),
      effect,
      ...(causedByEventId !== undefined ? { causedByEventId } : {}),
    });
  } catch (error) {
    if (LedgerError.isInstance(error, "unresolved-attempt") && options.onUnresolved) {
      const unresolved = error as UnresolvedAttemptError & { attempt: Attempt };
      const decision = await options.onUnresolved({
        name: call.name,
        toolCallId: call.toolCallId,
        input: call.input,
        attempt: unresolved.attempt,
        error: unresolved,
      });
      if (decision.action === "retry") return recorder.retry(unresolved.attempt);
      await recorder.abandon(unresolved.attempt, decision.reason);
      throw new AttemptAbandonedError(`tool call ${call.name}`, decision.reason);
    }
    // The call is not durable (store down, divergence, unresolved): the run stops here.
    state.block(error);
    throw error;
  }
}

async function settle<T>(state: AdapterState, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (ledgerError) {
    state.block(ledgerError);
    throw ledgerError;
  }
}

/** Commits the request; a call that cannot be recorded stops the run (unless abandoned). */
async function startCall(
  state: AdapterState,
  options: WrapToolsOptions,
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

/** On resume: the recorded result (`{ output }`), or the recorded error thrown again. */
function replayedOutput(attempt: Attempt, name: string): { output: unknown } | undefined {
  const replayed = attempt.replayed;
  if (replayed?.status === "completed")
    return { output: decodeToolOutput(replayed.result, replayed.metadata) };
  if (replayed?.status === "failed") throw rebuildError(replayed.error);
  if (replayed?.status === "abandoned")
    throw new AttemptAbandonedError(`tool call ${name}`, replayed.reason);
  return undefined;
}

async function recordOutput(state: AdapterState, attempt: Attempt, output: unknown) {
  let recorded: ReturnType<typeof encodeToolOutput>;
  try {
    recorded = encodeToolOutput(output);
  } catch (error) {
    // The tool ran, but its result cannot be recorded: the SDK hands the model this error,
    // and the ledger says so (left unresolved, a resume would treat it as in flight).
    await settle(state, state.recorder.toolFailed(attempt, error));
    throw error;
  }
  const { result, metadata } = recorded;
  await settle(state, state.recorder.toolCompleted(attempt, result, metadata ? { metadata } : {}));
}

function wrapExecute(
  state: AdapterState,
  options: WrapToolsOptions,
  name: string,
  execute: NonNullable<Tool["execute"]>,
) {
  return async (input: unknown, executeOptions: ToolExecutionOptions): Promise<unknown> => {
    const attempt = await startCall(state, options, name, input, executeOptions);
    const replayed = replayedOutput(attempt, name);
    if (replayed) return replayed.output;
    let output: unknown;
    try {
      output = await execute(input as never, executeOptions);
      if (isAsyncIterable(output)) {
        // Returned by a plain function: the SDK cannot stream it through this wrapper (it
        // looks at what execute returns synchronously); the last value is the result.
        let last: unknown;
        for await (const value of output) last = value;
        output = last;
      }
    } catch (error) {
      await settle(state, state.recorder.toolFailed(attempt, error));
      throw error;
    }
    await recordOutput(state, attempt, output);
    return output;
  };
}

/**
 * A streaming tool (`async *execute`): the SDK streams each value as a preliminary result and
 * takes the last as the result, so the wrapper is a generator too, passing each value on as
 * it comes and recording the last. A replayed call yields its recorded result once.
 */
function wrapStreamingExecute(
  state: AdapterState,
  options: WrapToolsOptions,
  name: string,
  execute: (input: never, options: ToolExecutionOptions) => AsyncIterable<unknown>,
) {
  return async function* (input: unknown, executeOptions: ToolExecutionOptions) {
    const attempt = await startCall(state, options, name, input, executeOptions);
    const replayed = replayedOutput(attempt, name);
    if (replayed) {
      yield replayed.output;
      return;
    }
    let last: unknown;
    try {
      for await (const value of execute(input as never, executeOptions)) {
        last = value;
        yield value;
      }
    } catch (error) {
      await settle(state, state.recorder.toolFailed(attempt, error));
      throw error;
    }
    await recordOutput(state, attempt, last);
  };
}

function isAsyncGeneratorFunction(
  execute: unknown,
): execute is (input: never, options: ToolExecutionOptions) => AsyncIterable<unknown> {
  return Object.prototype.toString.call(execute) === "[object AsyncGeneratorFunction]";
}

/**
 * Wraps each tool's `execute` so that every call is recorded: `tool.requested` (with the SDK's
 * toolCallId, the completion that asked for it, and its effect) is committed before the tool
 * runs, then `tool.completed` or `tool.failed` (the error is rethrown; the SDK turns it into a
 * tool-error part). If the ledger cannot take the request the tool does not run, and the next
 * model call is refused, which stops the run. On resume, recorded calls are answered from the
 * ledger.
 */
export function wrapTools<TOOLS extends ToolSet>(tools: TOOLS, options: WrapToolsOptions): TOOLS {
  const state = adapterStateOf(options.recorder);
  const wrapped: Record<string, Tool> = {};
  for (const [name, tool] of Object.entries(tools) as [string, Tool][]) {
    wrapped[name] =
      tool.execute === undefined
        ? tool
        : ({
            ...tool,
            execute: isAsyncGeneratorFunction(tool.execute)
              ? wrapStreamingExecute(state, options, name, tool.execute)
              : wrapExecute(state, options, name, tool.execute),
          } as Tool);
  }
  return wrapped as TOOLS;
}
