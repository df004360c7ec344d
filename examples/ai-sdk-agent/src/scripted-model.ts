import { appendFileSync } from "node:fs";
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 8, text: 8, reasoning: undefined },
};

export const FINAL_TEXT = "Order 42 has shipped and the customer was told by email.";

function toolCall(toolCallId: string, toolName: string, input: unknown): LanguageModelV3Content {
  return { type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) };
}

/** The answer is a function of the prompt (how many tool results it holds), like a real model. */
function answer(options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
  const results = options.prompt
    .filter((message) => message.role === "tool")
    .flatMap((message) => message.content).length;
  const content =
    results === 0
      ? [toolCall("call-lookup", "lookupOrder", { orderId: 42 })]
      : results === 1
        ? [
            toolCall("call-email", "sendEmail", {
              to: "ada@example.com",
              subject: "Order 42 shipped",
            }),
          ]
        : [{ type: "text" as const, text: FINAL_TEXT }];
  return {
    content,
    finishReason:
      results < 2 ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
    response: {
      id: `resp-${results}`,
      modelId: "scripted-1",
      timestamp: new Date(1_700_000_000_000),
    },
  };
}

export interface ScriptedModelOptions {
  /** Each call appends `start <n>` and `finish <n>` lines here (counted across processes). */
  callLog: string;
  /** Called mid-stream of the final answer (after a few words): a crash test hangs here. */
  onStreamMiddle?: () => Promise<void>;
}

/** An offline MockLanguageModelV3 that plays the order-support script, for generate and stream. */
export function scriptedModel(options: ScriptedModelOptions): MockLanguageModelV3 {
  const log = (line: string) => appendFileSync(options.callLog, `${line}\n`);
  return new MockLanguageModelV3({
    provider: "example",
    modelId: "scripted-1",
    doGenerate: async (call) => {
      log("start generate");
      const result = answer(call);
      log("finish generate");
      return result;
    },
    doStream: async (call) => {
      log("start stream");
      const result = answer(call);
      const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
      for (const part of result.content) {
        if (part.type === "text") {
          parts.push({ type: "text-start", id: "t" });
          for (const word of part.text.split(/(?<= )/))
            parts.push({ type: "text-delta", id: "t", delta: word });
          parts.push({ type: "text-end", id: "t" });
        } else parts.push(part as LanguageModelV3StreamPart);
      }
      parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
      let index = 0;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          async pull(controller) {
            const part = parts[index++];
            if (part === undefined) {
              controller.close();
              return;
            }
            if (index === 6 && part.type === "text-delta") await options.onStreamMiddle?.();
            if (part.type === "finish") log("finish stream");
            controller.enqueue(part);
          },
        }),
      };
    },
  });
}
