import type { JsonValue } from "@agent-ledger/core";
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** What only the charge's receipt holds. */
export const RECEIPT = "receipt-for-swordfish";

/** A redaction by path: the receipt field of any payload. */
export const RECEIPT_PATH = ["**.receipt"];

/** A redaction by function: the receipt wherever it is, inside strings too. */
export const hideReceipt = (payload: JsonValue): JsonValue =>
  JSON.parse(JSON.stringify(payload).replaceAll(RECEIPT, "[receipt]"));

/**
 * An agent that charges 7 (noting `charge 7` in `effects`) and gets `{ receipt }` back; the
 * model then answers "paid" if it reads the receipt, "not paid" if not.
 */
export function receiptAgent(afterEffect?: AfterEffect) {
  return chargingAgent(afterEffect, () => ({ receipt: RECEIPT }), ["paid", "not paid"]);
}

/**
 * `receiptAgent`'s charge declined: the card's processor charged nothing but threw an error
 * quoting the receipt, which the SDK tells the model in place of a result. The model answers
 * "declined, ref seen" if it reads the receipt, "declined" if not.
 */
export function decliningAgent(afterEffect?: AfterEffect) {
  return chargingAgent(afterEffect, () => {
    throw new Error(`card declined, ${RECEIPT}`);
  }, ["declined, ref seen", "declined"]);
}

/**
 * An agent whose `charge` notes `charge <amount>` in `effects`, then ends as `outcome` does; its
 * model asks for a charge of 7, then answers `seen` if its input holds the receipt, else `unseen`.
 */
function chargingAgent(
  afterEffect: AfterEffect | undefined,
  outcome: () => { receipt: string },
  [seen, unseen]: [string, string],
) {
  const effects: string[] = [];
  const charge = tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      effects.push(`charge ${amount}`);
      await afterEffect?.(`charge ${amount}`);
      return outcome();
    },
  });
  const model = new ScriptedModel([
    () => [functionCall("charge", { amount: 7 }, "call_charge")],
    (request) => [message(JSON.stringify(request.input).includes(RECEIPT) ? seen : unseen)],
  ]);
  return { effects, model, agent: new Agent({ name: "main", tools: [charge] }) };
}
