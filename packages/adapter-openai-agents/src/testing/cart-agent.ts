import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** The app's context of the cart agent: the cart its `create_cart` tool made. */
export interface CartContext {
  cartId?: string;
}

/**
 * An agent whose `create_cart` keeps the cart it made in the run's context (and says so in its
 * result), and whose `checkout`, on the next turn, charges the cart the context holds, noting
 * `charge <cart>` in `effects`. The model then answers with what checkout returned.
 */
export function cartAgent(afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const createCart = tool({
    name: "create_cart",
    description: "make a cart",
    parameters: z.object({}),
    execute: async (_args, runContext) => {
      (runContext?.context as CartContext).cartId = "cart-123";
      return "cart cart-123 created";
    },
  });
  const checkout = tool({
    name: "checkout",
    description: "charge the cart",
    parameters: z.object({}),
    execute: async (_args, runContext) => {
      const { cartId } = (runContext?.context ?? {}) as CartContext;
      effects.push(`charge ${cartId}`);
      await afterEffect?.(`charge ${cartId}`);
      return cartId ? `paid ${cartId}` : "no cart";
    },
  });
  const model = new ScriptedModel([
    () => [functionCall("create_cart", {}, "call_1")],
    () => [functionCall("checkout", {}, "call_2")],
    (request) => [message(JSON.stringify(request.input.at(-1)))],
  ]);
  return {
    effects,
    model,
    agent: new Agent<CartContext>({ name: "shop", tools: [createCart, checkout] }),
  };
}
