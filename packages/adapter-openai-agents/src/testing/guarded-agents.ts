import {
  Agent,
  defineToolInputGuardrail,
  type InputGuardrail,
  Runner,
  run,
  ToolGuardrailFunctionOutputFactory,
} from "@openai/agents";
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
 * `on: "runner"`: the guardrail is given to a Runner's config (`new Runner({ inputGuardrails
 * })`, returned as `runner`, to pass to runWithLedger and resumeRun), not to the agent.
 */
export function guardedChargingAgent(options: {
  lookupMs: number;
  afterEffect?: AfterEffect;
  charged?: boolean;
  on?: "agent" | "runner";
}) {
  const turns = options.charged ? [] : [[chargeCall(7, "call_1")]];
  const charging = chargingAgent(turns, options.afterEffect);
  const guardModel = new ScriptedModel([() => [message("safe")]]);
  const checker = new Agent({ name: "checker", model: ledgerModel(guardModel) });
  const policy: InputGuardrail = {
    name: "policy",
    execute: async ({ input, context }) => {
      await new Promise((resolve) => setTimeout(resolve, options.lookupMs));
      const checked = await run(checker, input, { context });
      return {
        outputInfo: checked.finalOutput,
        tripwireTriggered: checked.finalOutput !== "safe",
      };
    },
  };
  if (options.on === "runner")
    return { ...charging, guardModel, runner: new Runner({ inputGuardrails: [policy] }) };
  charging.agent.inputGuardrails = [policy];
  return { ...charging, guardModel, runner: undefined };
}

/**
 * Two charges in one turn (7 as call_1, 8 as call_2), each checked by a tool input guardrail
 * that runs a guardrail agent (ledgerModel) after a lookup: `slowAmount`'s lookup waits for the
 * other call's guardrail to finish (2 s at most, for a run where the other's is not run), so the
 * other asks its model first. A fixed head start (it was 50 ms) lost that order on a busy machine.
 */
export function toolGuardedChargingAgent(options: {
  slowAmount: number;
  afterEffect?: AfterEffect;
  charged?: boolean;
}) {
  const turns = options.charged ? [] : [[chargeCall(7, "call_1"), chargeCall(8, "call_2")]];
  const charging = chargingAgent(turns, options.afterEffect);
  const guardModel = new ScriptedModel([0, 1].map(() => () => [message("allowed")]));
  const checker = new Agent({ name: "checker", model: ledgerModel(guardModel) });
  let otherChecked: () => void = () => {};
  const other = new Promise<void>((resolve) => {
    otherChecked = resolve;
  });
  const amountCheck = defineToolInputGuardrail({
    name: "amount_check",
    run: async ({ toolCall }) => {
      const { amount } = JSON.parse(toolCall.arguments) as { amount: number };
      const slow = amount === options.slowAmount;
      if (slow) await Promise.race([other, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      const checked = await run(checker, `may we charge ${amount}?`);
      if (!slow) otherChecked();
      return ToolGuardrailFunctionOutputFactory.allow(checked.finalOutput);
    },
  });
  for (const tool of charging.agent.tools)
    if (tool.type === "function") tool.inputGuardrails = [amountCheck];
  return { ...charging, guardModel };
}

/**
 * An agent that answers "sold", checked by an output guardrail given to a Runner's config
 * (`new Runner({ outputGuardrails })`) that runs a guardrail agent (its own scripted model,
 * wrapped with ledgerModel) on the output.
 */
export function runnerOutputGuardedAgent() {
  const model = new ScriptedModel([() => [message("sold")]]);
  const guardModel = new ScriptedModel([() => [message("fine")]]);
  const checker = new Agent({ name: "checker", model: ledgerModel(guardModel) });
  const runner = new Runner({
    outputGuardrails: [
      {
        name: "tone",
        execute: async ({ agentOutput, context }) => {
          const checked = await run(checker, String(agentOutput), { context });
          return { outputInfo: checked.finalOutput, tripwireTriggered: false };
        },
      },
    ],
  });
  return { model, guardModel, runner, agent: new Agent({ name: "main" }) };
}
