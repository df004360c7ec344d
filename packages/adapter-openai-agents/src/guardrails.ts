import type { Runner } from "@openai/agents";
import type { AnyAgent } from "./any-agent.js";
import { currentScope, type GuardrailOf, type LedgerScope, refused, runInScope } from "./scope.js";

type GuardrailFunction = (args: never) => Promise<unknown>;

// The functions recordedGuardrail made: a guardrail given both to an agent and to a runner is
// wrapped once (its calls would record on a child run of its own child run).
const recording = new WeakSet<GuardrailFunction>();

/** The agent a guardrail runs for (its arguments' `agent`). */
function agentOf(args: unknown): object | undefined {
  const agent = (args as { agent?: unknown } | undefined)?.agent;
  return typeof agent === "object" && agent !== null ? agent : undefined;
}

/** The call a tool guardrail checks (its arguments' `toolCall.callId`), if it says. */
function checkedCallId(args: unknown): string | undefined {
  const callId = (args as { toolCall?: { callId?: unknown } } | undefined)?.toolCall?.callId;
  return typeof callId === "string" && callId.length > 0 ? callId : undefined;
}

/**
 * A guardrail's own model calls (the SDK's pattern: `run(guardrailAgent, input, { context })`
 * in `execute`, the guardrail agent's model wrapped with ledgerModel) record on a child run of
 * the guardrail (`guardrailOf`), opened at its first call, as an agent tool's do. On the run
 * itself they would interleave with the calls running beside them: the agent's first model call
 * beside an input guardrail (`runInParallel`, the default), the guardrails of the other tool
 * calls of a turn. A resume whose calls come in another order than before would meet a request
 * it did not record (`replay-divergence`). A tool guardrail's child run is named after the call
 * it checks too, so each call's is found again, whatever the order. A guardrail of a Runner's
 * config is recorded the same way (see recordedRunnerGuardrails).
 */
function recordedGuardrail(
  guardrail: { name: string },
  call: GuardrailFunction,
  kind: GuardrailOf["guardrail"],
): GuardrailFunction {
  if (recording.has(call)) return call;
  const recorded = async (args: never) => {
    const scope = currentScope();
    if (!scope) return call.call(guardrail, args);
    const toolCallId = kind.startsWith("tool_") ? checkedCallId(args) : undefined;
    const nested: LedgerScope = {
      root: scope.root,
      current: undefined,
      currentAgent: undefined,
      parent: {
        // Resolved at the guardrail's first recorded call: an agent tool's run, not open
        // before its agent starts, opens as it would have (see recorderOf).
        of: { scope, agent: agentOf(args) },
        causedByEventId: undefined,
        toolName: toolCallId !== undefined ? `${guardrail.name} [${toolCallId}]` : guardrail.name,
        guardrail: {
          guardrailOf: guardrail.name,
          guardrail: kind,
          ...(toolCallId !== undefined ? { toolCallId } : {}),
        },
      },
      run: scope.run,
    };
    let output: unknown;
    try {
      output = await runInScope(nested, () => call.call(guardrail, args));
    } catch (error) {
      // The ledger refused a call inside: the run stops and stays open (fail closed).
      if (nested.refused !== undefined) throw refused(nested.refused);
      if (nested.current) await nested.current.failRun(error).catch(() => undefined);
      throw error;
    }
    if (nested.refused !== undefined) throw refused(nested.refused);
    const child = nested.current;
    if (child) await child.completeRun(output);
    return output;
  };
  recording.add(recorded);
  return recorded;
}

/** Replaces a guardrail's `method` (`execute`, a tool guardrail's `run`) with its recorded one. */
function recordGuardrail(
  guardrail: { name: string },
  method: "execute" | "run",
  kind: GuardrailOf["guardrail"],
): void {
  const target = guardrail as unknown as Record<string, unknown>;
  const original = target[method];
  if (typeof original !== "function") return;
  target[method] = recordedGuardrail(guardrail, original as GuardrailFunction, kind);
}

/** Wraps the guardrails of an agent and of its function tools (see recordGuardrail). */
export function recordGuardrails(agent: AnyAgent): void {
  for (const guardrail of agent.inputGuardrails ?? [])
    recordGuardrail(guardrail, "execute", "input");
  for (const guardrail of agent.outputGuardrails ?? [])
    recordGuardrail(guardrail, "execute", "output");
  for (const tool of agent.tools ?? []) {
    if (tool.type !== "function") continue;
    for (const guardrail of tool.inputGuardrails ?? [])
      recordGuardrail(guardrail, "run", "tool_input");
    for (const guardrail of tool.outputGuardrails ?? [])
      recordGuardrail(guardrail, "run", "tool_output");
  }
}

type RunnerGuardrails = Pick<Runner["config"], "inputGuardrails" | "outputGuardrails">;

// A copy of a runner's guardrail whose `execute` records (see recordedGuardrail).
function recordedCopy<G extends { name: string; execute: unknown }>(
  guardrail: G,
  kind: "input" | "output",
): G {
  if (typeof guardrail.execute !== "function") return guardrail;
  const execute = guardrail.execute as GuardrailFunction;
  return { ...guardrail, execute: recordedGuardrail(guardrail, execute, kind) };
}

/**
 * The guardrails of a Runner's config (`new Runner({ inputGuardrails, outputGuardrails })`),
 * recorded as an agent's are (see recordedGuardrail), for the Runner runWithLedger and resumeRun
 * build from it: copies, the app's runner and its guardrail objects left as they are (the SDK's
 * Runner takes each guardrail's `execute` when it is built). The SDK gives them the agent they
 * check (the starting agent's input, the output of the agent that ended the run), so their
 * child runs hang on that agent's run, as that agent's own guardrails' do.
 */
export function recordedRunnerGuardrails(config: RunnerGuardrails): RunnerGuardrails {
  return {
    ...(config.inputGuardrails !== undefined
      ? { inputGuardrails: config.inputGuardrails.map((g) => recordedCopy(g, "input")) }
      : {}),
    ...(config.outputGuardrails !== undefined
      ? { outputGuardrails: config.outputGuardrails.map((g) => recordedCopy(g, "output")) }
      : {}),
  };
}
