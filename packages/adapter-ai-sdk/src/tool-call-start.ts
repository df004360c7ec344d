import { type Attempt, LedgerError, type UnresolvedAttemptError } from "@agent-ledger/core";
import type { ToolExecutionOptions } from "ai";
import type { AdapterState } from "./adapter-state.js";
import { closeLeftOpen } from "./child-run-end.js";
import { recordDeniedBeside } from "./denied-approvals.js";
import { toJsonValue } from "./plain-json.js";
import { AttemptAbandonedError } from "./replayed-errors.js";
import { checkedDecision, effectOf, type ToolOptions } from "./wrap-tools-options.js";

// The start of a wrapped tool's call: its request committed before the tool runs.

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
  const effect = effectOf(options, call.name);
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
export async function startCall(
  state: AdapterState,
  options: ToolOptions,
  name: string,
  input: unknown,
  executeOptions: ToolExecutionOptions,
): Promise<Attempt> {
  state.assertOpen();
  const { toolCallId } = executeOptions;
  try {
    // An approved call the SDK runs as a turn begins: the denials answered beside it first.
    await recordDeniedBeside(state, executeOptions.messages);
  } catch (error) {
    state.block(error);
    throw error;
  }
  // A streamed call waits until the completion that asked for it is committed. If the model
  // call failed instead (an error part such as "Overloaded": the SDK reads on and still runs
  // the calls that arrive), the tool does not run and the SDK hands the model's error on as
  // its tool error. That failure is the model's and is recorded: it must not stop the run.
  // (A completion the ledger could not commit has already stopped it, in the middleware.)
  const causedByEventId = await state.causes.of(toolCallId);
  try {
    return await beginToolCall(state, options, { name, input, toolCallId, causedByEventId });
  } catch (error) {
    if (error instanceof AttemptAbandonedError) throw error;
    state.block(error);
    throw error;
  }
}
