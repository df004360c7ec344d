// An agent whose `delegate` tool runs a sub-agent with a wrapped tool of its own, `lookup`, all
// on one recorder: what a tool call's child run holds when the tool returns, or dies, while
// the sub-agent is still at work.
import type { SessionRecorder } from "@agent-ledger/core";
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
} from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type WrapToolsOptions, wrapTools } from "../wrap-tools.js";
import { textResult, toolCall, toolCallsResult } from "./scripted-model.test.data.js";

/** The first user text of a prompt: who is asking (the agent, the sub-agent, lookup). */
function asker(prompt: LanguageModelV3CallOptions["prompt"]): string {
  const part = prompt.find((message) => message.role === "user")?.content[0];
  return typeof part === "object" && part.type === "text" ? part.text : "";
}

export interface DelegatingOptions {
  recorder: SessionRecorder;
  /** lookup's `execute`, given the wrapped model (a model call inside it: prompt "inside lookup"). */
  lookup: (model: LanguageModelV3) => Promise<string>;
  /** How delegate answers, given the sub-agent to run (default: the sub-agent's text). */
  delegate?: (subAgent: () => Promise<string>) => Promise<string>;
  /** The answer to the call inside lookup (default: "looked"). */
  inside?: () => Promise<LanguageModelV3GenerateResult>;
  onUnresolved?: WrapToolsOptions["onUnresolved"];
}

/**
 * The model answers by who asks: the agent asks for `delegate` (d1), then says "done"; the
 * sub-agent asks for `lookup` (l1), then says "sub done". `asked` lists the role of the last
 * message of each prompt that reached the provider (`user`, or `tool` once a result is in).
 */
export function delegatingAgent(options: DelegatingOptions) {
  const { recorder } = options;
  const asked: string[] = [];
  const mock = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      asked.push(prompt.at(-1)?.role ?? "");
      const answered = prompt.some((message) => message.role === "tool");
      const who = asker(prompt);
      if (who === "inside lookup") return options.inside?.() ?? textResult("looked");
      if (who === "sub-agent")
        return answered ? textResult("sub done") : toolCallsResult(toolCall("l1", "lookup", {}));
      return answered ? textResult("done") : toolCallsResult(toolCall("d1", "delegate", {}));
    },
  });
  const model = wrapLanguageModel({ model: mock, middleware: ledgerMiddleware({ recorder }) });
  const lookup = wrapTools(
    { lookup: tool({ inputSchema: z.object({}), execute: () => options.lookup(model) }) },
    { recorder },
  );
  const subAgent = async () =>
    (await generateText({ model, tools: lookup, prompt: "sub-agent", stopWhen: stepCountIs(3) }))
      .text;
  const tools = wrapTools(
    {
      delegate: tool({
        inputSchema: z.object({}),
        execute: () => (options.delegate ? options.delegate(subAgent) : subAgent()),
      }),
    },
    { recorder, ...(options.onUnresolved ? { onUnresolved: options.onUnresolved } : {}) },
  );
  const run = () => generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
  return { run, asked };
}
