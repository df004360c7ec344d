// An agent whose tool runs a sub-agent with wrapped tools of its own, on the same recorder (a
// wrapped tool inside a wrapped tool): `delegate` asks the sub-agent, whose model asks for
// `lookup`. The agent delegates twice, and the model reuses its tool call ids (`call_0`) on
// every step, as some providers do. The SIGKILL tests of a tool call made inside a tool.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import { assistant, textResult, toolCall, toolCallsResult } from "./scripted-model.test.data.js";

/** Where the nested agent records. */
export const NESTED = { sessionId: "nested", runId: "agent" };

/** Where a crashing run dies: in the agent's final call, or in the second lookup. */
export type NestedCrash = "final" | "second lookup";

function userText(prompt: LanguageModelV3CallOptions["prompt"]): string {
  const user = prompt.find((message) => message.role === "user");
  const part = user?.content.find((content) => content.type === "text");
  return part?.type === "text" ? part.text : "";
}

/**
 * The model, answering by prompt: the sub-agent (prompt "sub-agent") asks for `lookup`, then
 * answers "sub done"; the agent asks for `delegate` until it has two results, then answers
 * "all done". `calls` lists the calls that reached the provider.
 */
export function nestedModel(options: { crashAt?: NestedCrash; onCall?: () => void } = {}) {
  const calls: string[] = [];
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "nested-1",
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((message) => message.role === "tool").length;
      const sub = userText(prompt) === "sub-agent";
      const asked = sub ? `sub ${results}` : results < 2 ? `agent ${results}` : "final";
      calls.push(asked);
      options.onCall?.();
      if (asked === "final" && options.crashAt === "final") await crashHere();
      if (sub)
        return results === 0
          ? toolCallsResult(toolCall("call_0", "lookup", {}))
          : textResult("sub done");
      if (results < 2) return toolCallsResult(toolCall("call_0", "delegate", {}));
      return textResult("all done");
    },
  });
  return { model, calls };
}

/** The agent: both tool sets wrapped with its one recorder, both tools idempotent. */
export async function runNested(options: {
  recorder: SessionRecorder;
  model: MockLanguageModelV3;
  effects?: string[];
  crashAt?: NestedCrash;
  onEffect?: (effect: string) => void;
}): Promise<string> {
  const { recorder } = options;
  const model = wrapLanguageModel({
    model: options.model,
    middleware: ledgerMiddleware({ recorder }),
  });
  let lookups = 0;
  const subTools = wrapTools(
    {
      lookup: tool({
        inputSchema: z.object({}),
        execute: async () => {
          lookups++;
          if (options.crashAt === "second lookup" && lookups === 2) await crashHere();
          options.effects?.push("lookup");
          options.onEffect?.("lookup");
          return `found ${lookups}`;
        },
      }),
    },
    { recorder, idempotent: ["lookup"] },
  );
  const tools = wrapTools(
    {
      delegate: tool({
        inputSchema: z.object({}),
        execute: async () =>
          (
            await generateText({
              model,
              tools: subTools,
              prompt: "sub-agent",
              stopWhen: stepCountIs(3),
            })
          ).text,
      }),
    },
    { recorder, idempotent: ["delegate"] },
  );
  const { text } = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(4) });
  return text;
}

/** In the crash child: the nested agent, dying where `crashAt` says. */
export function crashingNested(crashAt: NestedCrash) {
  return async (store: EventStore): Promise<void> => {
    const recorder = new SessionRecorder({ store, ...NESTED, actor: assistant });
    const { model } = nestedModel({ crashAt, onCall: report.modelCall });
    await runNested({ recorder, model, crashAt, onEffect: report.effect });
  };
}
