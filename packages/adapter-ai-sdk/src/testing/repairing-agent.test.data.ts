// A streamed agent whose tool input is repaired by the same model (experimental_repairToolCall):
// shared by the tests of calls made from streamText's callbacks and by the crash child that
// is SIGKILLed after the repair, while the agent's stream is still open.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import type { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashableModel } from "./crash-in-child.test.data.js";
import { assistant, textResult, toolCall, toolCallsResult } from "./scripted-model.test.data.js";

/** Where the repairing agent records. */
export const REPAIRING_RUN = { sessionId: "repairing", runId: "r1" };

/**
 * Answers by prompt: a repair request with the input fixed, a prompt holding a tool result
 * with "done", the agent's first step with a weather call whose input is wrong (`town`). With
 * `crashAfterToolCall` (in the crash child, which reports each provider call), that first
 * stream stops for good (the crash point) once its tool-call part has been read, before its
 * finish part.
 */
export function repairingModel({ crashAfterToolCall = false } = {}) {
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    if (JSON.stringify(prompt).includes("repair")) return textResult('{"city":"Paris"}');
    if (prompt.some((message) => message.role === "tool")) return textResult("done");
    return toolCallsResult(toolCall("c1", "weather", { town: "Paris" }));
  };
  return crashableModel(answer, { crashAfterToolCall });
}

/** The agent, streaming, whose bad weather input is repaired by the same model. */
export async function repairingAgent(recorder: SessionRecorder, model: MockLanguageModelV3) {
  const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
  const cities: string[] = [];
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapped,
    tools: wrapTools(
      {
        weather: tool({
          inputSchema: z.object({ city: z.string() }).strict(),
          execute: async ({ city }) => {
            cities.push(city);
            return `sunny in ${city}`;
          },
        }),
      },
      { recorder },
    ),
    prompt: "weather in Paris?",
    stopWhen: stepCountIs(3),
    experimental_repairToolCall: async ({ toolCall: call }) => {
      const { text } = await generateText({
        model: wrapped,
        prompt: `repair this tool call input: ${call.input}`,
      });
      return { ...call, input: text };
    },
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  return { text: await result.text, cities, errors };
}

/** In the crash child: the repair is answered and recorded; the process dies before the finish part. */
export async function crashAfterRepair(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...REPAIRING_RUN, actor: assistant });
  await repairingAgent(recorder, repairingModel({ crashAfterToolCall: true }));
}
