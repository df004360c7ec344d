import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/**
 * A payments client the app keeps in the context: no plain JSON (the RunState writes what its
 * `toJSON` says), and known by its identity: the charges made through it are its own.
 */
export class Payments {
  readonly charges: string[] = [];

  charge(what: string): void {
    this.charges.push(what);
  }

  toJSON() {
    return { client: "payments" };
  }
}

/**
 * The app's context of the cart agent: the cart its `create_cart` tool made, the coupon it used
 * up (and deleted), the payments client `checkout` charges through.
 */
export interface CartContext {
  cartId?: string;
  coupon?: string;
  payments?: Payments;
}

/** The context the app starts the cart agent's run with, in every process: a coupon, a client. */
export function cartContext(): CartContext {
  return { coupon: "SAVE10", payments: new Payments() };
}

/**
 * An agent whose `create_cart` keeps the cart it made in the run's context (and says so in its
 * result), using up the context's coupon (deleting it), and whose `checkout`, on the next turn,
 * charges the cart the context holds, with the coupon the context still holds, noting
 * `charge <cart>[ with coupon <coupon>]` in `effects` and charging it through the context's
 * `payments` client if there is one. Its instructions read the cart from the context, so the
 * model request of every turn after `create_cart` names it. The model then answers with what
 * checkout returned.
 */
export function cartAgent(
  afterEffect?: AfterEffect,
  options: { checkoutNeedsApproval?: boolean } = {},
) {
  const effects: string[] = [];
  const createCart = tool({
    name: "create_cart",
    description: "make a cart",
    parameters: z.object({}),
    execute: async (_args, runContext) => {
      const context = runContext?.context as CartContext;
      context.cartId = "cart-123";
      const { coupon } = context;
      delete context.coupon;
      return `cart cart-123 created${coupon ? ` with coupon ${coupon}` : ""}`;
    },
  });
  const checkout = tool({
    name: "checkout",
    description: "charge the cart",
    parameters: z.object({}),
    needsApproval: options.checkoutNeedsApproval ?? false,
    execute: async (_args, runContext) => {
      const { cartId, coupon, payments } = (runContext?.context ?? {}) as CartContext;
      const effect = `charge ${cartId}${coupon ? ` with coupon ${coupon}` : ""}`;
      payments?.charge(effect);
      effects.push(effect);
      await afterEffect?.(effect);
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
    agent: new Agent<CartContext>({
      name: "shop",
      instructions: (runContext) => {
        const { cartId } = runContext.context;
        return cartId ? `Sell. The cart is ${cartId}.` : "Sell. There is no cart yet.";
      },
      tools: [createCart, checkout],
    }),
  };
}
