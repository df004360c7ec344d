// An agent whose tool calls the same wrapped model (an LLM inside a tool): `research` asks the
// model for each part of its topic, then the agent answers "summary". The SIGKILL tests of a
// call made inside a tool. The model answers by prompt, not by call order, so a resumed run
// gets the same answers whichever calls the ledger already holds.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import { assistant, textResult, toolCall, toolCallsResult } from "./scripted-model.test.data.js";

/** Where the research agent records. */
export const RESEARCH = { sessionId: "research", runId: "agent-1" };

/** One topic with one inner call, or two topics researched in parallel with two inner calls each. */
export const researchVariants = {
  single: { prompt: "research a and b", topics: ["a and b"], parts: ["outline"] },
  parallel: {
    prompt: "research a, b in parallel",
    topics: ["a", "b"],
    parts: ["outline", "details"],
  },
  twoParts: { prompt: "research a in two parts", topics: ["a"], parts: ["outline", "details"] },
};
export type ResearchVariant = keyof typeof researchVariants;

type Prompt = LanguageModelV3CallOptions["prompt"];

function lastUserText(prompt: Prompt): string {
  const user = prompt.filter((message) => message.role === "user").at(-1);
  const part = user?.content.find((content) => content.type === "text");
  return part?.type === "text" ? part.text : "";
}

/**
 * The model: a prompt `sub:<topic> <part>` (a call inside the tool) gets `<part> of <topic>`; the
 * agent's first call gets one `research` call per topic; once tool results are in, "summary".
 * `calls` lists the prompts that reached the provider; `crashAt` stops there (in a child).
 */
export function researchModel(
  variant: ResearchVariant,
  { crashAt, onCall }: { crashAt?: (prompt: string) => boolean; onCall?: () => void } = {},
) {
  const calls: string[] = [];
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "research-1",
    doGenerate: async ({ prompt }) => {
      const text = lastUserText(prompt);
      const asked = prompt.some((message) => message.role === "tool") ? "final" : text;
      calls.push(asked);
      onCall?.();
      if (crashAt?.(asked)) await crashHere();
      if (text.startsWith("sub:")) {
        const [topic, part] = text.slice(4).split(" ");
        return textResult(`${part} of ${topic}`);
      }
      if (asked === "final") return textResult("summary");
      return toolCallsResult(
        ...researchVariants[variant].topics.map((topic, index) =>
          toolCall(`call_${index}`, "research", { topic }),
        ),
      );
    },
  });
  return { model, calls };
}

/**
 * The agent, as the user's review wrote it: ONE wrapped model, used by the agent and inside its
 * tool. `effects` lists what each research call produced (the tool's side effect).
 */
export async function runResearch(options: {
  recorder: SessionRecorder;
  variant: ResearchVariant;
  model: MockLanguageModelV3;
  effects?: string[];
}): Promise<string> {
  const { recorder, variant, effects } = options;
  const { prompt, parts } = researchVariants[variant];
  const model = wrapLanguageModel({
    model: options.model,
    middleware: ledgerMiddleware({ recorder }),
  });
  const tools = wrapTools(
    {
      research: tool({
        inputSchema: z.object({ topic: z.string() }),
        execute: async ({ topic }) => {
          const found: string[] = [];
          for (const part of parts)
            found.push((await generateText({ model, prompt: `sub:${topic} ${part}` })).text);
          effects?.push(`research:${topic}`);
          return found.join(", ");
        },
      }),
    },
    { recorder, idempotent: ["research"] },
  );
  const { text } = await generateText({ model, tools, prompt, stopWhen: stepCountIs(3) });
  return text;
}

function crashingResearch(variant: ResearchVariant, crashAt: (prompt: string) => boolean) {
  return async (store: EventStore): Promise<void> => {
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor: assistant });
    const { model } = researchModel(variant, { crashAt, onCall: report.modelCall });
    await runResearch({ recorder, variant, model });
  };
}

/** In the crash child: the research agent dies at its final model call. */
export const crashResearchAtFinalCall = crashingResearch("single", (asked) => asked === "final");

/** In the crash child: two research calls (two inner calls each) done, dies at the final call. */
export const crashParallelResearchAtFinalCall = crashingResearch(
  "parallel",
  (asked) => asked === "final",
);

/** In the crash child: dies inside research's second inner call, the first one recorded. */
export const crashInsideInnerCall = crashingResearch(
  "twoParts",
  (asked) => asked === "sub:a details",
);
