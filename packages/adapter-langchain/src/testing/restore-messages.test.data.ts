import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "restore-session";
export const RUN = "restore-run";

/** `summarize` asks a model of its own (with its config, so that the call is traced). */
export function summarizeTool() {
  const summarizer = new FakeListChatModel({ responses: ["a short summary"] });
  // Through a chain, as a summarizing chain would: the model is inside the tool all the same.
  const chain = RunnableLambda.from(async (text: string, config) =>
    summarizer.invoke(`Summarize: ${text}`, config),
  );
  return tool(
    async ({ text }: { text: string }, config) => (await chain.invoke(text, config)).content,
    {
      name: "summarize",
      description: "summarize a text",
      schema: z.object({ text: z.string() }),
    },
  );
}

export function asks(...calls: { id: string; name: string; args: Record<string, unknown> }[]) {
  return new AIMessage({ content: "", tool_calls: calls });
}

export const restoreMessagesCrashes = {
  /** The model asks for summarize and send; summarize runs, then the process dies before send. */
  "restore-messages:before-send": async (store) => {
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const config = { callbacks: [handler] };
    const model = new ScriptedChatModel(() =>
      asks(
        { id: "c1", name: "summarize", args: { text: "long doc" } },
        { id: "c2", name: "send", args: { to: "bob" } },
      ),
    );
    const ai = await model.invoke([new HumanMessage("summarize then send")], config);
    const [summarize] = ai.tool_calls ?? [];
    if (!summarize) throw new Error("expected a tool call");
    await summarizeTool().invoke({ ...summarize, type: "tool_call" }, config);
    await crashHere();
  },
} satisfies Record<string, CrashScenario>;
