// A streamed agent whose refund tool asks the same model whether the refund is risky from its
// needsApproval or onInputAvailable, which streamText awaits at the stream's tool-call part.
// Shared by the tests of calls made from those callbacks and by the crash child that is
// SIGKILLed once the judge has answered, while the agent's stream is still open. The model
// answers by prompt, so a resumed run gets the same answers.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, type Tool, tool, wrapLanguageModel } from "ai";
import type { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashableModel } from "./crash-in-child.test.data.js";
import { assistant, textResult, toolCall, toolCallsResult } from "./scripted-model.test.data.js";

/** Where the judging agent records. */
export const JUDGING_RUN = { sessionId: "judging", runId: "r1" };

/** A callback streamText runs at the refund call's tool-call part. */
export type ToolCallCallback = "needsApproval" | "onInputAvailable";

/**
 * Answers a repair request with the input fixed, a judge's question with "no", a prompt
 * holding a tool result with "done", else a refund of 5 (`{ amt: 5 }`, to repair, if
 * `badInput`). With `crashAfterToolCall` (in the crash child, which reports each provider
 * call), the agent's first stream stops for good (the crash point) when it is read on after
 * its tool-call part, before its finish part.
 */
export function refundModel({ badInput = false, crashAfterToolCall = false } = {}) {
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    const asked = JSON.stringify(prompt);
    if (asked.includes("repair")) return textResult('{"amount":5}');
    if (asked.includes("risky?")) return textResult("no");
    if (prompt.some((message) => message.role === "tool")) return textResult("done");
    return toolCallsResult(toolCall("c1", "refund", badInput ? { amt: 5 } : { amount: 5 }));
  };
  return crashableModel(answer, { crashAfterToolCall });
}

/**
 * The agent, streaming, whose refund tool asks the same model whether the refund is risky from
 * `callback` (`ask` replaces that question: another agent's call, say). `repair`: the model's
 * input is repaired by the same model first; `wrap: false` gives the tool without wrapTools.
 */
export async function refundAgent(
  recorder: SessionRecorder,
  model: MockLanguageModelV3,
  {
    callback,
    repair = false,
    wrap = true,
    ask,
  }: {
    callback: ToolCallCallback;
    repair?: boolean;
    wrap?: boolean;
    ask?: () => Promise<string>;
  },
) {
  const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
  const refunds: number[] = [];
  const heard: string[] = [];
  const errors: unknown[] = [];
  const judge = async (amount: number) => {
    const { text } = ask
      ? { text: await ask() }
      : await generateText({ model: wrapped, prompt: `is a refund of ${amount} risky?` });
    heard.push(text);
    return text;
  };
  const refund: Tool<{ amount: number }, string> = tool({
    inputSchema: z.object({ amount: z.number() }).strict(),
    ...(callback === "needsApproval"
      ? { needsApproval: async ({ amount }) => (await judge(amount)) === "yes" }
      : { onInputAvailable: async ({ input }) => void (await judge(input.amount)) }),
    execute: async ({ amount }) => {
      refunds.push(amount);
      return "refunded";
    },
  });
  const result = streamText({
    model: wrapped,
    tools: wrap ? wrapTools({ refund }, { recorder }) : { refund },
    prompt: "refund 5",
    stopWhen: stepCountIs(3),
    ...(repair
      ? {
          experimental_repairToolCall: async ({ toolCall: call }) => ({
            ...call,
            input: (
              await generateText({ model: wrapped, prompt: `repair this input: ${call.input}` })
            ).text,
          }),
        }
      : {}),
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  return { text: await result.text, refunds, heard, errors };
}

/**
 * In the crash child: needsApproval's judge is answered and recorded; the process dies when the
 * agent's stream is read on after its tool-call part, before its finish part.
 */
export async function crashAfterJudge(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...JUDGING_RUN, actor: assistant });
  await refundAgent(recorder, refundModel({ crashAfterToolCall: true }), {
    callback: "needsApproval",
  });
}
