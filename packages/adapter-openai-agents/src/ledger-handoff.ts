import {
  type Attempt,
  HANDOFF_TO_FIELD,
  LedgerError,
  ReplayDivergenceError,
  rebuiltError,
  type ToolEffect,
} from "@agent-ledger/core";
import type { Handoff, RunContext } from "@openai/agents";
import type { AnyAgent } from "./any-agent.js";
import { assertLedgerHandoffArguments } from "./option-checks.js";
import { callContext, parseArgs } from "./recorded-tool-call.js";
import { currentScope, type LedgerScope, ledgerStep, recorderOf } from "./scope.js";
import { toldToResumeRunUsers } from "./unresolved-call.js";

// biome-ignore lint/suspicious/noExplicitAny: handoffs of any context and output type
type AnyHandoff = Handoff<any, any>;
type InvokeHandoff = AnyHandoff["onInvokeHandoff"];

export interface LedgerHandoffOptions {
  /**
   * Safe to run twice: after a crash during the handoff, its invocation (its `onHandoff`
   * callback) runs again by itself; otherwise the resume refuses it (`unresolved-attempt`) until
   * a person decides with `agent-ledger resolve`. Default false.
   */
  idempotent?: boolean;
  /** What the invocation does to the world, recorded on `tool.requested`. Default "unknown". */
  effect?: ToolEffect["kind"];
}

/**
 * A handoff object (`handoff(agent, {...})`, `new Handoff(...)`) may run code of its own when
 * the model hands off (its `onHandoff` callback), which the SDK keeps to itself: whether there is
 * one cannot be told from outside, so the default is that of a tool whose effect is unknown.
 */
const DEFAULT_EFFECT: ToolEffect = { kind: "unknown", idempotent: false };

/** The effect of each ledger wrapper, by the wrapper: a clone of a handoff shares its wrapper. */
const wrappers = new WeakMap<InvokeHandoff, ToolEffect>();

/**
 * The run contexts of the handoffs being invoked now: a handoff cloned with another target
 * (`clone({ agent })`) invokes the handoff it was cloned from inside its own invocation, which
 * is recorded once, by the outer wrapper.
 */
const invoking = new WeakSet<object>();

/** True for an entry of `agent.handoffs` that is a handoff object, not an agent. */
export function isHandoffObject(entry: unknown): entry is AnyHandoff {
  return (
    typeof entry === "object" &&
    entry !== null &&
    typeof (entry as { onInvokeHandoff?: unknown }).onInvokeHandoff === "function" &&
    typeof (entry as { toolName?: unknown }).toolName === "string"
  );
}

/** The effect a ledger handoff declared, or undefined for a handoff not wrapped by ledgerHandoff. */
export function ledgerHandoffEffect(handoff: object): ToolEffect | undefined {
  if (!isHandoffObject(handoff)) return undefined;
  return wrappers.get(handoff.onInvokeHandoff);
}

// The SDK gives onInvokeHandoff the call's arguments, not its callId: the call is the first one
// of the handoff's tool in the model response the scope's agent is acting on (the SDK runs only
// the first handoff of a response).
function callIdOf(scope: LedgerScope, toolName: string): string | undefined {
  return scope.turnCalls?.find((call) => call.name === toolName)?.callId;
}

// The agent a recorded invocation handed off to: the handoff's target, as recorded (its name).
function recordedTarget(handoff: AnyHandoff, attempt: Attempt, result: unknown): AnyAgent {
  const target = handoff.agent as AnyAgent;
  const recorded = (result as { assistant?: unknown } | null)?.assistant;
  if (typeof recorded === "string" && recorded !== target.name)
    throw new ReplayDivergenceError(
      `handoff ${handoff.toolName} went to agent ${recorded} when recorded, and its target now is ${target.name}`,
      { attemptId: attempt.attemptId, seq: attempt.seq },
    );
  return target;
}

/**
 * Records a handoff's invocation as a tool call of the agent that hands off: `tool.requested`
 * (the SDK's callId, the handoff's tool name, its arguments) is committed before the handoff's
 * own code (its `onHandoff` callback) runs, `tool.completed` (`{ assistant: <target> }`, what
 * the model is told) after. On a re-executed run the recorded invocation is answered from the
 * ledger: the target agent is returned without the callback running again (its effect
 * happened). One in flight when the process died runs again only if declared idempotent (or
 * a person approved it: `agent-ledger resolve --approve`); otherwise the resume is refused with
 * `unresolved-attempt` until a person decides, since the SDK has no approval for handoffs. One
 * a person abandoned hands off without running the callback, the model told nothing of the
 * reason (a handoff's result is its target, not text for the model). The handoff is changed in
 * place and returned; instrumentAgent wraps every handoff object of the graph this way (a
 * handoff given as a plain agent runs no code of its own and is not recorded).
 */
export function ledgerHandoff<H extends AnyHandoff>(
  handoff: H,
  options: LedgerHandoffOptions = {},
): H {
  assertLedgerHandoffArguments(handoff, options);
  const existing = wrappers.get(handoff.onInvokeHandoff);
  if (existing) {
    // Already wrapped: a later call may only refine what it names of the declared effect.
    if (options.idempotent !== undefined) existing.idempotent = options.idempotent;
    if (options.effect !== undefined) existing.kind = options.effect;
    return handoff;
  }
  const effect: ToolEffect = {
    kind: options.effect ?? DEFAULT_EFFECT.kind,
    idempotent: options.idempotent ?? DEFAULT_EFFECT.idempotent,
  };
  const original = handoff.onInvokeHandoff;
  // Called by the SDK as a method: `this` is the handoff invoked, a clone of `handoff` too.
  const invoke = async function (
    this: unknown,
    // biome-ignore lint/suspicious/noExplicitAny: any context
    runContext: RunContext<any>,
    args: string,
  ): Promise<AnyAgent> {
    const self = isHandoffObject(this) ? this : handoff;
    if (invoking.has(runContext)) return original.call(self, runContext, args);
    const scope = currentScope();
    const recorder = scope ? await ledgerStep(() => recorderOf(scope)) : undefined;
    if (!scope || !recorder)
      throw new LedgerError(
        "invalid-argument",
        `handoff ${self.toolName} was invoked outside runWithLedger/resumeRun: refusing to run it unrecorded`,
      );
    const callId = callIdOf(scope, self.toolName);
    const context = callContext(runContext.context);
    const attempt = await ledgerStep(() =>
      recorder.beforeToolCall({
        ...(callId !== undefined ? { toolCallId: callId } : {}),
        name: self.toolName,
        args: parseArgs(args),
        effect,
        metadata: { [HANDOFF_TO_FIELD]: self.agentName },
      }),
    ).catch((error: unknown) => {
      // In flight at the crash, undecided: said as a handoff, with the command that decides it.
      throw LedgerError.isInstance(error, "unresolved-attempt")
        ? toldToResumeRunUsers(error, { store: recorder.store, handoffTo: self.agentName })
        : error;
    });
    const replayed = attempt.replayed;
    context.answered(scope.run, attempt);
    if (replayed?.status === "completed") return recordedTarget(self, attempt, replayed.result);
    if (replayed?.status === "failed") throw rebuiltError(replayed.error);
    // A person abandoned it after a crash: its callback does not run again; the handoff goes on.
    if (replayed?.status === "abandoned") return self.agent as AnyAgent;
    let target: AnyAgent;
    invoking.add(runContext);
    try {
      target = (await original.call(self, runContext, args)) as AnyAgent;
    } catch (error) {
      await context.recordChange(recorder, attempt);
      await ledgerStep(() => recorder.toolFailed(attempt, error));
      throw error;
    } finally {
      invoking.delete(runContext);
    }
    await context.recordChange(recorder, attempt);
    await ledgerStep(() => recorder.toolCompleted(attempt, { assistant: target.name }));
    return target;
  } as InvokeHandoff;
  wrappers.set(invoke, effect);
  handoff.onInvokeHandoff = invoke;
  return handoff;
}
