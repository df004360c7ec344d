import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { agentFor, GO, world } from "./agent.test.data.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

/** Turn 1: send and research in parallel; turn 2: a final answer built from their results. */
export function sendAndResearch(messages: BaseMessage[]) {
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  if (results.length === 0)
    return new AIMessage({
      content: "",
      tool_calls: [
        { id: "call-send", name: "send", args: { to: "bob" } },
        { id: "call-research", name: "research", args: { topic: "x" } },
      ],
    });
  return new AIMessage(`final: ${results.map((message) => message.content).join(" | ")}`);
}

/**
 * `research`, an agent tool (idempotent): its body asks a model of its own, through the config
 * the tool is given, so the handler records that model call inside the research call. `before`
 * runs first.
 */
export function researchTool(before: () => Promise<void>) {
  const inner = new ScriptedChatModel(() => new AIMessage("notes on x"));
  const research = tool(
    async ({ topic }: { topic: string }, config) => {
      await before();
      const answer = await inner.invoke([new HumanMessage(`research ${topic}`)], config);
      return String(answer.content);
    },
    {
      name: "research",
      description: "asks a model",
      schema: z.object({ topic: z.string() }),
      metadata: { idempotent: true },
    },
  );
  return { research, inner };
}

export const refusedSiblingCrashes = {
  /**
   * The process dies inside send (under ledgerMiddleware), once its message is out, while
   * research, asked for in the same step, is in flight too (its body has not called its model).
   */
  "refused-sibling:send-in-flight": async (store) => {
    let researchStarted = () => {};
    const started = new Promise<void>((resolve) => {
      researchStarted = resolve;
    });
    const { research } = researchTool(async () => {
      researchStarted();
      await new Promise<never>(() => {});
    });
    const first = world({ note: noteEffect });
    first.block(async () => {
      await started;
      await crashHere();
    });
    const crashed = agentFor(store, [...first.tools, research], sendAndResearch);
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
} satisfies Record<string, CrashScenario>;
