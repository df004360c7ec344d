import type { AnyAgent } from "./any-agent.js";
import { currentScope, type LedgerScope, recorderOf, refused, runInScope } from "./scope.js";

type Guardrail = { name: string; execute: (args: never) => Promise<unknown> };

const wrapped = new WeakSet<object>();

/**
 * A guardrail's own model calls (the SDK's pattern: `run(guardrailAgent, input, { context })`
 * in `execute`, the guardrail agent's model wrapped with ledgerModel) record on a child run of
 * the guardrail (`guardrailOf`), opened at its first call, as an agent tool's do. On the run
 * itself they would interleave with the agent's own first model call, which an input
 * guardrail runs beside by default (`runInParallel`): a resume whose calls come in another
 * order than before would meet a request it did not record (`replay-divergence`).
 */
function recordGuardrail(guardrail: Guardrail, kind: "input" | "output"): void {
  if (wrapped.has(guardrail) || typeof guardrail.execute !== "function") return;
  wrapped.add(guardrail);
  const execute = guardrail.execute;
  guardrail.execute = async (args: never) => {
    const scope = currentScope();
    if (!scope) return execute.call(guardrail, args);
    const recorder = await recorderOf(scope);
    const nested: LedgerScope = {
      root: scope.root,
      current: undefined,
      currentAgent: undefined,
      parent: {
        recorder,
        causedByEventId: undefined,
        toolName: guardrail.name,
        guardrail: kind,
      },
      run: scope.run,
    };
    let output: unknown;
    try {
      output = await runInScope(nested, () => execute.call(guardrail, args));
    } catch (error) {
      // The ledger refused a call inside: the run stops and stays open (fail closed).
      if (nested.refused !== undefined) throw refused(nested.refused);
      if (nested.current) await nested.current.failRun(error).catch(() => undefined);
      throw error;
    }
    if (nested.refused !== undefined) throw refused(nested.refused);
    const child = nested.current;
    if (child) await child.completeRun(output as never);
    return output;
  };
}

/** Wraps the input and output guardrails of an agent (see recordGuardrail). */
export function recordGuardrails(agent: AnyAgent): void {
  for (const guardrail of agent.inputGuardrails ?? []) recordGuardrail(guardrail, "input");
  for (const guardrail of agent.outputGuardrails ?? []) recordGuardrail(guardrail, "output");
}
