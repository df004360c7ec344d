import { Agent, run } from "@openai/agents";
import { ledgerModel } from "../ledger-model.js";
import { chargeCall, chargingAgent } from "./charging-agents.js";
import type { AfterEffect } from "./fixture.js";
import { message, ScriptedModel } from "./scripted-model.js";

/**
 * The charging agent behind an input guardrail as the SDK's docs write one: `execute` runs a
 * guardrail agent (its own scripted model, wrapped with ledgerModel) on the input, beside the
 * agent's first model call (`runInParallel`, the default). Before its model call the guardrail
 * waits `lookupMs` (a policy lookup): how long varies from one process to the next, so the two
 * model calls start in another order after a resume. `charged`: the agent's model answers as
 * after the charge from its first call (a resumed run whose first call the ledger answers).
 */
export function guardedChargingAgent(options: {
  lookupMs: number;
  afterEffect?: AfterEffect;
  charged?: boolean;
}) {
  const turns = options.charged ? [] : [[chargeCall(7, "call_1")]];
  const charging = chargingAgent(turns, options.afterEffect);
  const guardModel = new ScriptedModel([() => [message("safe")]]);
  const checker = new Agent({ name: "checker", model: ledgerModel(guardModel) });
  charging.agent.inputGuardrails = [
    {
      name: "policy",
      execute: async ({ input, context }) => {
        await new Promise((resolve) => setTimeout(resolve, options.lookupMs));
        const checked = await run(checker, input, { context });
        return {
          outputInfo: checked.finalOutput,
          tripwireTriggered: checked.finalOutput !== "safe",
        };
      },
    },
  ];
  return { ...charging, guardModel };
}
