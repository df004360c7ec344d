import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { ledgerTool } from "@agent-ledger/openai-agents";
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { crashPoint } from "./crash-point.js";

/** Lines of `<workDir>/orders.log`: one per order really placed (the side effect). */
export function placedOrders(workDir: string): string[] {
  const file = `${workDir}/orders.log`;
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The shop agent (three tools) and the receipt agent it hands off to. */
export function shopAgent(workDir: string) {
  const lookupPrice = ledgerTool(
    tool({
      name: "lookup_price",
      description: "Look up the price of an item",
      parameters: z.object({ item: z.string() }),
      execute: async ({ item }) => `${item}: 42 EUR`,
    }),
    // A read: safe to run again after a crash.
    { idempotent: true, effect: "read" },
  );
  // Returns nothing: the model is shown "undefined", and a resumed run must show it the same.
  const notifyWarehouse = tool({
    name: "notify_warehouse",
    description: "Tell the warehouse an item will be ordered",
    parameters: z.object({ item: z.string() }),
    execute: async ({ item }) => {
      appendFileSync(`${workDir}/warehouse.log`, `${item}\n`);
    },
  });
  const placeOrder = ledgerTool(
    tool({
      name: "place_order",
      description: "Place an order (charges the customer)",
      parameters: z.object({ item: z.string(), price: z.number() }),
      // Runs after the model asked for the tool and before the tool is recorded.
      needsApproval: async () => {
        await crashPoint("before-tool");
        return false;
      },
      execute: async ({ item, price }, _context, details) => {
        await crashPoint("tool");
        const callId = details?.toolCall?.callId ?? "?";
        appendFileSync(`${workDir}/orders.log`, `${callId} ${item} ${price}\n`);
        return `order ${callId} placed: ${item} for ${price} EUR`;
      },
    }),
    { idempotent: false, effect: "write" },
  );
  const receipt = new Agent({ name: "receipt", instructions: "You write receipts." });
  return new Agent({
    name: "shop",
    instructions: "You sell lamps.",
    tools: [lookupPrice, notifyWarehouse, placeOrder],
    handoffs: [receipt],
  });
}
