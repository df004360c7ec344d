import {
  Agent,
  handoff,
  type Model,
  type ModelRequest,
  type ModelResponse,
  tool,
  Usage,
} from "@openai/agents";
import { z } from "zod";
import { instrumentAgent } from "../instrument-agent.js";
import { ledgerHandoff } from "../ledger-handoff.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message } from "./scripted-model.js";

/** How "front" hands off to "billing". */
export type HandoffKind =
  /** `handoff(billing, { onHandoff })`: the callback opens a ticket. */
  | "callback"
  /** The same, declared idempotent with `ledgerHandoff(..., { idempotent: true })`. */
  | "idempotent callback"
  /** `handoff(billing)`: a handoff object without a callback. */
  | "no callback"
  /** `handoffs: [billing]`: the agent itself. */
  | "plain agent";

// The text of a request, to decide on.
function textOf(request: ModelRequest): string {
  return typeof request.input === "string" ? request.input : JSON.stringify(request.input);
}

/**
 * A fake model whose answer depends only on the request (the agent, by its instructions, and
 * what the conversation holds), so a resumed process answers as the first did. Counts its calls
 * (the live ones: the ledger answers the recorded ones).
 */
export class DecidingModel implements Model {
  calls = 0;

  #decide(request: ModelRequest): ModelResponse["output"] {
    const text = textOf(request);
    switch (request.systemInstructions) {
      case "main":
        return text.includes("call_front")
          ? [message(text.includes("paid") ? "done" : "not done")]
          : [functionCall("front_tool", { input: "pay" }, "call_front")];
      case "front":
        return [functionCall("transfer_to_billing", {}, "call_handoff")];
      default:
        if (!text.includes("call_charge"))
          return [functionCall("charge", { amount: 7 }, "call_charge")];
        return [message(text.includes("charged 7") ? "paid" : "not paid")];
    }
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    return {
      output: this.#decide(request),
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      responseId: `resp_${this.calls}`,
    };
  }

  // biome-ignore lint/correctness/useYield: never streamed in these tests
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("DecidingModel does not stream");
  }
}

/**
 * "front" hands off to "billing" (as `kind` says), which calls `charge` (not idempotent), then
 * answers "paid". The handoff's callback, if any, opens a ticket. With `asTool`, "main" calls
 * front as a tool (`front_tool`, Agent.asTool) and answers "done". Side effects ("ticket opened",
 * "charge 7") are appended to `effects`, then `afterEffect` is called (a crash child dies there).
 */
export function handoffFixture(options: {
  kind: HandoffKind;
  asTool?: boolean;
  afterEffect?: AfterEffect;
}) {
  const effects: string[] = [];
  const perform = async (effect: string) => {
    effects.push(effect);
    await options.afterEffect?.(effect);
  };
  const model = new DecidingModel();
  const charge = tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      await perform(`charge ${amount}`);
      return `charged ${amount}`;
    },
  });
  const billing = new Agent({ name: "billing", instructions: "billing", tools: [charge], model });
  const onHandoff = async () => {
    await perform("ticket opened");
  };
  const entry =
    options.kind === "plain agent"
      ? billing
      : options.kind === "no callback"
        ? handoff(billing)
        : options.kind === "callback"
          ? handoff(billing, { onHandoff })
          : ledgerHandoff(handoff(billing, { onHandoff }), { idempotent: true, effect: "write" });
  const front = new Agent({ name: "front", instructions: "front", handoffs: [entry], model });
  const main = options.asTool
    ? new Agent({
        name: "main",
        instructions: "main",
        // An agent run as a tool is not reachable from main: instrumented by itself.
        tools: [
          instrumentAgent(front).asTool({
            toolName: "front_tool",
            toolDescription: "takes payments",
          }),
        ],
        model,
      })
    : front;
  return { effects, main, front, billing, model };
}
