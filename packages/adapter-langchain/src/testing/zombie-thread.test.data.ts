import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ledgerAgent } from "./helpers.js";

export const SESSION = "zombie-session";
export const RUN = "zombie-run";

/** What a child process of zombie-thread.test.ts tells the test: one JSON line. */
export function say(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * The agent one process runs: a model that asks for `write` on two turns, one call each, then
 * answers; each model call paid and each write made is said as an `effect`.
 */
export function zombieAgent(store: EventStore) {
  const write = tool(
    async ({ id }: { id: string }) => {
      say({ effect: `write ${id}` });
      return `wrote ${id}`;
    },
    {
      name: "write",
      description: "write",
      schema: z.object({ id: z.string() }),
      metadata: { idempotent: true },
    },
  );
  const answer = (messages: BaseMessage[]) => {
    const done = messages.filter((message) => ToolMessage.isInstance(message)).length;
    say({ effect: `model ${done}` });
    if (done === 2) return new AIMessage("final");
    const id = `c${done}`;
    return new AIMessage({ content: "", tool_calls: [{ id, name: "write", args: { id } }] });
  };
  return ledgerAgent({ store, sessionId: SESSION, runId: RUN, tools: [write], answer });
}
