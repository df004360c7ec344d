import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

type OutputItem = ReturnType<typeof functionCall>;

/**
 * A tool that charges the card, noting each charge in `effects`. `declines`: the card declines
 * after the charge is noted (the tool throws: the SDK tells the model so and the run goes on).
 * `outlivesTimeout`: the tool has a `timeoutMs` of 50 ms, with that `timeoutBehavior`, and
 * charges after 300 ms, not heeding its signal.
 */
export function chargeTool(
  effects: string[],
  afterEffect?: AfterEffect,
  options: {
    needsApproval?: boolean;
    declines?: boolean;
    outlivesTimeout?: "error_as_result" | "raise_exception";
  } = {},
) {
  const { outlivesTimeout } = options;
  return tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    needsApproval: options.needsApproval ?? false,
    ...(outlivesTimeout ? { timeoutMs: 50, timeoutBehavior: outlivesTimeout } : {}),
    execute: async ({ amount }) => {
      if (outlivesTimeout) await new Promise((resolve) => setTimeout(resolve, 300));
      effects.push(`charge ${amount}`);
      await afterEffect?.(`charge ${amount}`);
      if (options.declines) throw new TypeError("card declined");
      return `charged ${amount}`;
    },
  });
}

/** A call of `charge` whose arguments are not JSON. */
export function notJsonCharge(callId: string): OutputItem {
  return { ...functionCall("charge", {}, callId), arguments: "{amount: 7" } as OutputItem;
}

export function chargeCall(amount: number, callId: string): OutputItem {
  return functionCall("charge", { amount }, callId);
}

/** A charge of 5 (c0), then a charge of 7 (c1) on the next turn. */
export const TWO_CHARGES = [[chargeCall(5, "c0")], [chargeCall(7, "c1")]];
/** TWO_CHARGES, then a charge of 3 (c2) on the next turn. */
export const THREE_CHARGES = [...TWO_CHARGES, [chargeCall(3, "c2")]];
/**
 * A provider that reuses tool call ids (call_0 on every response): a charge of 7, then of 3,
 * then of 2, one a turn.
 */
export const CALL_0_EVERY_TURN = [
  [chargeCall(7, "call_0")],
  [chargeCall(3, "call_0")],
  [chargeCall(2, "call_0")],
];
/** The same with two calls a turn, call_0 and call_1: charges of 7 and 5, then of 3 and 4. */
export const TWO_CALLS_EVERY_TURN = [
  [chargeCall(7, "call_0"), chargeCall(5, "call_1")],
  [chargeCall(3, "call_0"), chargeCall(4, "call_1")],
];
/** A call that is not JSON, then a charge of 7 on the next turn. */
export const BAD_THEN_CHARGE = [[notJsonCharge("call_bad")], [chargeCall(7, "call_charge")]];
/** A call that is not JSON and a charge of 7 on the same turn. */
export const BAD_BESIDE_CHARGE = [[notJsonCharge("call_bad"), chargeCall(7, "call_charge")]];
/** A call that is not JSON beside a charge of 7, then a charge of 3 on the next turn. */
export const BAD_AND_CHARGE_THEN_CHARGE = [
  [notJsonCharge("call_bad"), chargeCall(7, "call_a")],
  [chargeCall(3, "call_b")],
];

/**
 * `turns` are the model's answers; each call charges, and the model answers "sold" once a
 * charge went through. Arguments that are not JSON get the SDK's answer asking for valid JSON.
 * With `needsApproval`, every charge asks a person first.
 */
export function chargingAgent(
  turns: OutputItem[][],
  afterEffect?: AfterEffect,
  options: { needsApproval?: boolean } = {},
) {
  const effects: string[] = [];
  const charge = chargeTool(effects, afterEffect, options);
  const model = new ScriptedModel([
    ...turns.map((output) => () => output),
    (request) => [message(JSON.stringify(request.input).includes("charged") ? "sold" : "not")],
  ]);
  return { effects, model, agent: new Agent({ name: "main", tools: [charge] }) };
}

/**
 * An agent that calls `lookup`, then `charge` with arguments that are not JSON, then answers
 * with the last input item (the SDK's answer to the bad call). Lookups go to `effects`.
 */
export function lookupThenBadChargeAgent(afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const lookup = tool({
    name: "lookup",
    description: "look up a price",
    parameters: z.object({}),
    execute: async () => {
      effects.push("lookup");
      await afterEffect?.("lookup");
      return "7";
    },
  });
  // Never run: its only call is not JSON.
  const charge = chargeTool([]);
  const model = new ScriptedModel([
    () => [functionCall("lookup", {}, "call_1")],
    () => [notJsonCharge("call_2")],
    (request) => [message(JSON.stringify(request.input.at(-1)))],
  ]);
  return { effects, model, agent: new Agent({ name: "main", tools: [lookup, charge] }) };
}

/**
 * A charge of 7 made with `chargeTool`'s `options`, then the model answers with the last item it
 * was given: what it was told of the charge.
 */
function oneChargeAgent(options: Parameters<typeof chargeTool>[2], afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const model = new ScriptedModel([
    () => [chargeCall(7, "call_1")],
    (request) => [message(JSON.stringify(request.input.at(-1)))],
  ]);
  const charge = chargeTool(effects, afterEffect, options);
  return { effects, model, agent: new Agent({ name: "main", tools: [charge] }) };
}

/** One charge of 7 the card declines (see chargeTool). */
export function declinedChargeAgent(afterEffect?: AfterEffect) {
  return oneChargeAgent({ declines: true }, afterEffect);
}

/** One charge of 7 whose tool outlives its timeout (see chargeTool). */
export function slowChargeAgent(
  timeoutBehavior: "error_as_result" | "raise_exception",
  afterEffect?: AfterEffect,
) {
  return oneChargeAgent({ outlivesTimeout: timeoutBehavior }, afterEffect);
}
