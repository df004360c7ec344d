import { Agent, retryPolicies, tool } from "@openai/agents";
import { z } from "zod";
import { ledgerTool } from "../ledger-tool.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/**
 * Called right after a test tool performed its side effect (described by `effect`), before it
 * returns: a crash child reports the effect there and may die inside the call.
 */
export type AfterEffect = (effect: string) => Promise<void> | void;

/**
 * Two agents for tests: "main" calls `lookup` (idempotent read) and `charge` (a side effect),
 * then hands off to "closer", which answers. Side effects are appended to `effects`.
 */
export function fixture(
  options: {
    chargeNeedsApproval?: boolean;
    chargeThrows?: boolean;
    afterEffect?: AfterEffect;
  } = {},
) {
  const effects: string[] = [];
  const perform = async (effect: string) => {
    effects.push(effect);
    await options.afterEffect?.(effect);
  };
  const lookup = ledgerTool(
    tool({
      name: "lookup",
      description: "look up a price",
      parameters: z.object({ item: z.string() }),
      execute: async ({ item }) => {
        await perform(`lookup ${item}`);
        return `${item} costs 7`;
      },
    }),
    { idempotent: true, effect: "read" },
  );
  const charge = tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    needsApproval: options.chargeNeedsApproval ?? false,
    execute: async ({ amount }) => {
      if (options.chargeThrows) throw new Error("card declined");
      await perform(`charge ${amount}`);
      return `charged ${amount}`;
    },
  });
  const closer = new Agent({ name: "closer", instructions: "close the sale" });
  const main = new Agent({
    name: "main",
    instructions: "sell",
    tools: [lookup, charge],
    handoffs: [closer],
  });
  const model = new ScriptedModel([
    () => [functionCall("lookup", { item: "book" }, "call_lookup")],
    () => [functionCall("charge", { amount: 7 }, "call_charge")],
    () => [functionCall("transfer_to_closer", {}, "call_handoff")],
    (request) => {
      const input = JSON.stringify(request.input);
      return [message(input.includes("charged 7") ? "sold for 7" : "not sold")];
    },
  ]);
  return { effects, main, closer, model, lookup, charge };
}

/**
 * One agent, "main", whose provider fails the first call with a 500; the runner's retry
 * policy (`modelSettings.retry`) retries it. Then it calls `lookup` once and answers "done".
 */
export function retryingAgent() {
  const model = new ScriptedModel([
    () => {
      throw Object.assign(new Error("internal server error"), { status: 500 });
    },
    () => [functionCall("lookup", { item: "book" }, "call_lookup")],
    () => [message("done")],
  ]);
  const lookup = tool({
    name: "lookup",
    description: "look up a price",
    parameters: z.object({ item: z.string() }),
    execute: async () => "7",
  });
  const agent = new Agent({
    name: "main",
    tools: [lookup],
    modelSettings: {
      retry: {
        maxRetries: 2,
        policy: retryPolicies.httpStatus([500]),
        backoff: { initialDelayMs: 1, maxDelayMs: 1 },
      },
    },
  });
  return { model, agent };
}

/**
 * A rate limit as the provider's client throws it: the name, status and code that the runner's
 * retry policies (`retryPolicies.httpStatus([429])`) and an app's `catch` read.
 */
export function rateLimitError(): Error {
  return Object.assign(new Error("Rate limit reached for requests"), {
    name: "RateLimitError",
    status: 429,
    code: "rate_limit_exceeded",
  });
}

/**
 * One agent, "main", whose first `failures` model calls fail with `rateLimitError`, then it
 * answers "done". With `retries`, the runner retries a 429 that many times (`modelSettings.retry`),
 * then the run rejects with it.
 */
export function rateLimitedAgent(options: { failures: number; retries?: number }) {
  const failing = () => {
    throw rateLimitError();
  };
  const model = new ScriptedModel([
    ...Array.from({ length: options.failures }, () => failing),
    () => [message("done")],
  ]);
  const agent = new Agent({
    name: "main",
    ...(options.retries === undefined
      ? {}
      : {
          modelSettings: {
            retry: {
              maxRetries: options.retries,
              policy: retryPolicies.httpStatus([429]),
              backoff: { initialDelayMs: 1, maxDelayMs: 1 },
            },
          },
        }),
  });
  return { model, agent };
}
