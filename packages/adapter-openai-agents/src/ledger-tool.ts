import {
  type JsonValue,
  rebuiltError,
  type SessionRecorder,
  type ToolEffect,
} from "@agent-ledger/core";
import {
  AGENT_TOOL_PAUSED_EVENT_TYPE,
  loadRunState,
  recordedCall,
  UNDEFINED_OUTPUT_METADATA,
} from "./ledger-state.js";
import { recordedOutput } from "./model-json.js";
import { assertLedgerToolArguments } from "./option-checks.js";
import {
  callContext,
  openAttempt,
  parseArgs,
  recordedCallNeedsApproval,
  replayedOutput,
  toolCallRecorder,
} from "./recorded-tool-call.js";
import { currentScope, type LedgerScope, ledgerStep, refused, runInScope } from "./scope.js";
import { recordingName, toolCallName } from "./tool-call-names.js";
import {
  AGENT_TOOL_EFFECT,
  type AnyFunctionTool,
  DEFAULT_EFFECT,
  declareToolEffect,
  defaultAgentEffect,
  isAgentTool,
  requestMetadata,
} from "./tool-effects.js";
import {
  invokeWatchingErrors,
  MODEL_WAS_TOLD,
  toldAsRecorded,
  type WatchedCall,
} from "./tool-error-report.js";
import { isRecordedTimeout, type TimeoutRace, timeoutAgain, untilTimeout } from "./tool-timeout.js";

export interface LedgerToolOptions {
  /**
   * Safe to run twice (a read, an upsert). After a crash, a call of an idempotent tool that was
   * in flight runs again by itself; any other becomes an approval interruption. Default false,
   * except for an agent used as a tool (see `AGENT_TOOL_EFFECT`).
   */
  idempotent?: boolean;
  /**
   * What the tool does to the world, recorded on `tool.requested`. Default "unknown", except
   * for an agent used as a tool ("none").
   */
  effect?: ToolEffect["kind"];
  /** Record on this run instead of the current runWithLedger scope. */
  recorder?: SessionRecorder;
}

// Whether the ledger's approval function must stand in for the tool's own: inside an agent
// tool, or when the turn being run has a call of this tool that a crash left in flight or a
// person rejected. A call that completed or failed gets the tool's own policy, as it did when
// it was recorded: where that asked, the recorded decision answers it at the same point, so
// the replayed turn goes as it went. Before a model answered in this process (a run going on
// from a RunState), the turn is the interrupted one, whose calls are not known here: any
// recorded call of the tool counts. A namespaced tool's calls are named in its namespace
// (`toolName`); a run recorded before the adapter did so holds them under the bare name.
function ledgerAdds(scope: LedgerScope, toolName: string, bareName: string): boolean {
  if (scope.parent !== undefined) return true;
  const { run, turnCalls } = scope;
  if (!run.recordedToolNames.has(toolName) && !run.recordedToolNames.has(bareName)) return false;
  if (turnCalls === undefined) return true;
  return turnCalls.some((call) => {
    if (call.name !== toolName) return false;
    const status = recordedCall(run, call.callId)?.status;
    return status === "requested" || status === "abandoned";
  });
}

/** The tool each invoke ledgerTool put in place records for: a copy of the tool carries it. */
const copiedTools = new WeakMap<object, AnyFunctionTool>();

/**
 * Records an agent's function tool. The tool object is changed in place (its identity matters
 * to the SDK: approvals and agent-tool state are keyed by it) and returned.
 *
 * It wraps `invoke`, not `execute`: a throw from `invoke` rejects the run, a throw from
 * `execute` becomes a message to the model and the run goes on. A ledger failure (store down,
 * an unresolved call) must stop the run, so the ledger sits at `invoke`; the tool's own errors
 * are still turned into a message by the SDK's original invoke. Such a call is recorded as
 * `tool.failed` with the error the SDK reported, and with the message the model got in its
 * metadata (`MODEL_WAS_TOLD`), which a resumed run gives it again. `needsApproval` is wrapped too, so a call
 * left unresolved by a crash becomes an approval interruption on resume.
 */
export function ledgerTool<T extends AnyFunctionTool>(tool: T, options: LedgerToolOptions = {}): T {
  assertLedgerToolArguments(tool, options);
  // A copy of a tool wrapped already (`toolNamespace` copies a tool's properties, its wrapped
  // invoke and needsApproval among them) records through that wrapper: wrapping it again would
  // record each call twice, the second time inside the first. What `options` name refines the
  // effect declared for the tool it copies.
  const copied = copiedTools.get(tool.invoke);
  if (copied !== undefined && copied !== tool) {
    ledgerTool(copied, options);
    return tool;
  }
  const agentTool = isAgentTool(tool);
  const defaults = agentTool ? AGENT_TOOL_EFFECT : DEFAULT_EFFECT;
  const effect: ToolEffect = {
    kind: options.effect ?? defaults.kind,
    idempotent: options.idempotent ?? defaults.idempotent,
  };
  if (options.idempotent !== undefined) defaultAgentEffect.delete(tool);
  // Already wrapped: a later call may only refine what it names of the declared effect.
  if (declareToolEffect(tool, effect, options)) return tool;
  if (agentTool && options.idempotent === undefined) defaultAgentEffect.add(tool);
  const originalInvoke = tool.invoke.bind(tool);
  type ApprovalPolicy = typeof tool.needsApproval;
  // The policy of each object this accessor is on, as a data property would hold it: the tool's,
  // and that of each copy `toolNamespace` made of it (it copies the accessor, not its value) once
  // the app set one on the copy; till then a copy has the tool's. Unbound: the SDK knows a
  // needsApproval it made by its identity (below).
  let toolPolicy = tool.needsApproval;
  const copyPolicies = new WeakMap<AnyFunctionTool, ApprovalPolicy>();
  const ownPolicy = (target: AnyFunctionTool) => copyPolicies.get(target) ?? toolPolicy;

  const needsApproval = async (
    target: AnyFunctionTool,
    ...[runContext, input, callId]: Parameters<ApprovalPolicy>
  ): Promise<boolean> => {
    const run = currentScope()?.run;
    const recorded = callId && run ? recordedCall(run, callId) : undefined;
    // A paused agent tool call was not in flight: it goes on when its run resumes.
    if (recorded && !(callId && run?.pausedAgentTools.has(callId))) {
      const safeAgain = defaultAgentEffect.has(tool)
        ? run?.safeAgentCalls.has(recorded.attemptId) === true
        : effect.idempotent;
      return recordedCallNeedsApproval(run, recorded, safeAgain);
    }
    return ownPolicy(target).call(target, runContext, input, callId);
  };
  // The ledger's approval function for the calls of `target` (the tool or a copy), one each.
  const ledgerPolicies = new WeakMap<AnyFunctionTool, ApprovalPolicy>();
  const ledgerNeedsApproval = (target: AnyFunctionTool): ApprovalPolicy => {
    const made = ledgerPolicies.get(target);
    if (made) return made;
    const policy: ApprovalPolicy = async (runContext, input, callId) => {
      const needed = await needsApproval(target, runContext, input, callId);
      // The SDK asks only about undecided calls, so this call interrupts the agent run of this
      // scope; inside a tool call (Agent.asTool) that tool call pauses with it.
      const scope = currentScope();
      if (needed && scope) scope.paused = true;
      return needed;
    };
    ledgerPolicies.set(target, policy);
    return policy;
  };
  // The SDK takes any needsApproval it did not make itself for a dynamic approval policy, and
  // then turns a call whose arguments are not JSON into an approval interruption instead of
  // telling the model to send valid JSON. So the SDK gets the tool's own function unless the
  // ledger has something to add: recorded calls of this tool in the turn being run on a resumed
  // run, or an agent run inside a tool call (Agent.asTool), whose approvals pause that call.
  // By turn, not by run: a replayed turn whose call had bad arguments must get the answer it got
  // before (the model is told), not an approval request partway through the recorded history.
  Object.defineProperty(tool, "needsApproval", {
    configurable: true,
    enumerable: true,
    // Read on a copy too (see copiedTools), whose namespace names its calls.
    get: function (this: AnyFunctionTool | undefined) {
      const target = this ?? tool;
      const scope = currentScope();
      return scope && ledgerAdds(scope, toolCallName(target), tool.name)
        ? ledgerNeedsApproval(target)
        : ownPolicy(target);
    },
    set: function (this: AnyFunctionTool | undefined, value: ApprovalPolicy) {
      if (this === undefined || this === tool) toolPolicy = value;
      else copyPolicies.set(this, value);
    },
  });

  tool.invoke = async (runContext, input, details) => {
    const scope = currentScope();
    const callId = details?.toolCall?.callId;
    // In its namespace, if any (tool-call-names.ts).
    const name = recordingName(
      tool,
      details?.toolCall,
      callId !== undefined && scope ? recordedCall(scope.run, callId) : undefined,
    );
    const recorder = await toolCallRecorder(options, scope, name);
    // An agent tool call that paused at an approval goes on under its open attempt.
    const paused = callId !== undefined ? scope?.run.pausedAgentTools.get(callId) : undefined;
    if (paused && callId !== undefined) scope?.run.pausedAgentTools.delete(callId);
    const context = callContext(runContext?.context);
    const attempt =
      paused ??
      (await ledgerStep(() =>
        openAttempt(recorder, scope, {
          callId,
          name,
          args: parseArgs(input),
          effect,
          metadata: requestMetadata(tool),
        }),
      ));
    const replayed = attempt.replayed;
    context.answered(scope?.run, attempt);
    if (replayed?.status === "completed") return replayedOutput(replayed) as never;
    if (replayed?.status === "failed") {
      // A failure the SDK had made the model's answer: the same answer again.
      const told = replayed.metadata?.[MODEL_WAS_TOLD];
      if (told !== undefined) return told as never;
      if (isRecordedTimeout(replayed.error))
        return timeoutAgain(tool, details?.signal, rebuiltError(replayed.error));
      throw rebuiltError(replayed.error);
    }
    if (replayed?.status === "abandoned") return `Tool call rejected: ${replayed.reason}` as never;
    const pausedRun = callId !== undefined ? scope?.run.pausedAgentRuns.get(callId) : undefined;
    if (pausedRun && callId !== undefined) scope?.run.pausedAgentRuns.delete(callId);
    const nested: LedgerScope = {
      root: scope?.root ?? recorder,
      current: paused ? pausedRun : undefined,
      currentAgent: undefined,
      parent: {
        recorder,
        causedByEventId: attempt.requestedEventId,
        toolName: name,
        continuing: paused !== undefined && details?.resumeState !== undefined,
      },
      run: scope?.run ?? loadRunState([]),
    };
    let settled: TimeoutRace<WatchedCall<unknown>>;
    try {
      settled = await untilTimeout(
        () =>
          runInScope(nested, () =>
            invokeWatchingErrors(() => originalInvoke(runContext, input, details)),
          ),
        details?.signal,
      );
    } catch (error) {
      // The ledger refused a call inside: the call is not over, the run stops (fail closed).
      if (nested.refused !== undefined) throw refused(nested.refused);
      // Cancelled by the SDK (a parallel call failed, the run was aborted): the tool did not
      // fail, it was stopped and may or may not have done its work. The attempt stays in
      // flight, so a resumed run treats it as such (runs it again if idempotent, else asks).
      if (details?.signal?.aborted) throw error;
      await context.recordChange(recorder, attempt);
      await ledgerStep(() => recorder.toolFailed(attempt, error));
      if (nested.current) await nested.current.failRun(error).catch(() => undefined);
      throw error;
    }
    if ("timedOut" in settled) {
      // The runner stopped waiting (its `timeoutMs`): the model is told the call timed out, or
      // the run fails. The call is over for the run, whatever the tool still does meanwhile.
      const { timedOut } = settled;
      await context.recordChange(recorder, attempt);
      await ledgerStep(() => recorder.toolFailed(attempt, timedOut));
      if (nested.current) await nested.current.failRun(timedOut).catch(() => undefined);
      throw timedOut;
    }
    const { output, failure } = settled.done;
    // Same, when the SDK made the refusal inside an agent tool a message for the model.
    if (nested.refused !== undefined) throw refused(nested.refused);
    if (nested.paused) {
      // The agent run inside paused at an approval (the SDK returns "" for it): neither the
      // call nor its child run is complete. The SDK calls the tool again when the run resumes.
      // Recorded once per attempt: a call that went on from its pause and paused again (a
      // resume polled while the approval is undecided) is paused as the ledger says already.
      if (paused === undefined)
        await ledgerStep(() =>
          recorder.record({
            type: AGENT_TOOL_PAUSED_EVENT_TYPE,
            stepId: attempt.stepId,
            attemptId: attempt.attemptId,
            causedByEventId: attempt.requestedEventId,
            payload: { toolCallId: callId ?? null, name },
          }),
        );
      if (callId !== undefined) scope?.run.pausedAgentTools.set(callId, attempt);
      if (callId !== undefined && nested.current)
        scope?.run.pausedAgentRuns.set(callId, nested.current);
      // The SDK pauses the agent run that made this call too (its interruptions carry the
      // nested ones): if that run is itself an agent tool's, its call pauses with it, at any depth.
      if (scope) scope.paused = true;
      return output as never;
    }
    if (failure) {
      // The call failed and the model was told so in the SDK's words: the call is recorded as
      // failed, with those words, which a resumed run gives the model again (see replay above).
      const said = toldAsRecorded(
        (recordedOutput(output) ?? null) as JsonValue,
        failure.error,
        recorder,
      );
      await context.recordChange(recorder, attempt);
      await ledgerStep(() =>
        recorder.toolFailed(attempt, failure.error, {
          metadata: { [MODEL_WAS_TOLD]: said },
        }),
      );
      if (nested.current) await nested.current.failRun(failure.error).catch(() => undefined);
      return output as never;
    }
    await context.recordChange(recorder, attempt);
    await ledgerStep(() =>
      recorder.toolCompleted(
        attempt,
        recordedOutput(output),
        output === undefined ? { metadata: { ...UNDEFINED_OUTPUT_METADATA } } : {},
      ),
    );
    const child = nested.current;
    if (child) await ledgerStep(() => child.completeRun(output));
    return output as never;
  };
  copiedTools.set(tool.invoke, tool);
  return tool;
}
