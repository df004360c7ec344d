// An agent whose tool calls the same wrapped model (an LLM inside a tool): `research` asks the
// model for each part of its topic, then the agent answers "summary". The SIGKILL tests of a
// call made inside a tool. The model answers by prompt, not by call order, so a resumed run
// gets the same answers whichever calls the ledger already holds.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type WrapToolsOptions, wrapTools } from "../wrap-tools.js";
import { crashAfterAppend, crashHere, report } from "./crash-in-child.test.data.js";
import {
  assistant,
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the research agent records. */
export const RESEARCH = { sessionId: "research", runId: "agent-1" };

interface Variant {
  prompt: string;
  topics: string[];
  parts: string[];
  /** The tool asks for its parts at once (`Promise.all`) instead of one after the other. */
  atOnce?: boolean;
}

/**
 * One topic with one inner call; two topics researched in parallel with two inner calls each;
 * one topic in two parts asked one after the other, or both at once.
 */
export const researchVariants: Record<"single" | "parallel" | "twoParts" | "atOnce", Variant> = {
  single: { prompt: "research a and b", topics: ["a and b"], parts: ["outline"] },
  parallel: {
    prompt: "research a, b in parallel",
    topics: ["a", "b"],
    parts: ["outline", "details"],
  },
  twoParts: { prompt: "research a in two parts", topics: ["a"], parts: ["outline", "details"] },
  atOnce: {
    prompt: "research a, both parts at once",
    topics: ["a"],
    parts: ["outline", "details"],
    atOnce: true,
  },
};
export type ResearchVariant = keyof typeof researchVariants;

type Prompt = LanguageModelV3CallOptions["prompt"];

function lastUserText(prompt: Prompt): string {
  const user = prompt.filter((message) => message.role === "user").at(-1);
  const part = user?.content.find((content) => content.type === "text");
  return part?.type === "text" ? part.text : "";
}

/**
 * The model, generated or streamed: a prompt `sub:<topic> <part>` (a call inside the tool) gets
 * `<part> of <topic>`; the agent's first call gets one `research` call per topic; once tool
 * results are in, "summary". `calls` lists the prompts that reached the provider; `crashAt`
 * stops there (in a child), once it resolves true; `holdAt` holds the answer until the promise
 * it gives settles (a slow provider, or a hung one: a promise that never settles).
 */
export function researchModel(
  variant: ResearchVariant,
  {
    crashAt,
    holdAt,
    onCall,
  }: {
    crashAt?: (prompt: string) => boolean | Promise<boolean>;
    holdAt?: (prompt: string) => Promise<void> | undefined;
    onCall?: () => void;
  } = {},
) {
  const calls: string[] = [];
  const answer = async ({ prompt }: LanguageModelV3CallOptions) => {
    const text = lastUserText(prompt);
    const asked = prompt.some((message) => message.role === "tool") ? "final" : text;
    calls.push(asked);
    onCall?.();
    if (await crashAt?.(asked)) await crashHere();
    await holdAt?.(asked);
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
  };
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "research-1",
    doGenerate: answer,
    doStream: async (options) => ({ stream: partsStream(streamPartsOf(await answer(options))) }),
  });
  return { model, calls };
}

/** One call inside the tool: a `generateText`, or a `streamText` read to its end. */
async function ask(model: LanguageModelV3, prompt: string, stream: boolean): Promise<string> {
  if (!stream) return (await generateText({ model, prompt })).text;
  const errors: unknown[] = [];
  const result = streamText({ model, prompt, onError: ({ error }) => void errors.push(error) });
  const text = await result.text;
  if (errors.length > 0) throw errors[0];
  return text;
}

/** How the research tool asks for its parts (the variant says whether at once). */
export interface AskOptions {
  /** Start the parts in reverse order (a resumed process that starts them the other way). */
  reverse?: boolean;
  /** Ask with `streamText` instead of `generateText`. */
  stream?: boolean;
  /** Hears of each part once its answer is in (`generateText` returned it). */
  onAnswer?: (part: string) => void;
  /** Awaited in the tool once its parts are in, before its effect (a crash point). */
  afterParts?: () => Promise<void>;
  /**
   * Each part's call raced against a timeout of this many milliseconds: a part not answered in
   * time is taken as "timed out", and its call is left in flight when the tool returns.
   */
  raceMs?: number;
  /** Declare research idempotent (default true): run again after a crash. */
  idempotent?: boolean;
  /** wrapTools' `onUnresolved`, for research left in flight when it is not idempotent. */
  onUnresolved?: WrapToolsOptions["onUnresolved"];
}

const timedOut = (ms: number) =>
  new Promise<string>((resolve) => setTimeout(() => resolve("timed out"), ms));

/**
 * The agent, as the user's review wrote it: ONE wrapped model, used by the agent and inside its
 * tool. `effects` lists what each research call produced (the tool's side effect).
 */
export async function runResearch(
  options: {
    recorder: SessionRecorder;
    variant: ResearchVariant;
    model: MockLanguageModelV3;
    effects?: string[];
  } & AskOptions,
): Promise<string> {
  const { recorder, variant, effects } = options;
  const { prompt, parts, atOnce } = researchVariants[variant];
  const model = wrapLanguageModel({
    model: options.model,
    middleware: ledgerMiddleware({ recorder }),
  });
  const askPart = async (topic: string, part: string) => {
    const asked = ask(model, `sub:${topic} ${part}`, options.stream === true);
    const { raceMs } = options;
    const text = await (raceMs === undefined ? asked : Promise.race([asked, timedOut(raceMs)]));
    options.onAnswer?.(part);
    return text;
  };
  const tools = wrapTools(
    {
      research: tool({
        inputSchema: z.object({ topic: z.string() }),
        execute: async ({ topic }) => {
          const found: string[] = [];
          if (atOnce) {
            const order = options.reverse ? [...parts].reverse() : parts;
            const answers = new Map(
              await Promise.all(
                order.map(async (part) => [part, await askPart(topic, part)] as const),
              ),
            );
            for (const part of parts) found.push(answers.get(part) ?? "");
          } else for (const part of parts) found.push(await askPart(topic, part));
          await options.afterParts?.();
          effects?.push(`research:${topic}`);
          return found.join(", ");
        },
      }),
    },
    {
      recorder,
      idempotent: options.idempotent === false ? [] : ["research"],
      ...(options.onUnresolved ? { onUnresolved: options.onUnresolved } : {}),
    },
  );
  const { text } = await generateText({ model, tools, prompt, stopWhen: stepCountIs(3) });
  return text;
}

function crashingResearch(
  variant: ResearchVariant,
  crashAt: (prompt: string) => boolean | Promise<boolean>,
  ask: AskOptions = {},
  holdAt?: (prompt: string) => Promise<void> | undefined,
) {
  return async (store: EventStore): Promise<void> => {
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor: assistant });
    const { model } = researchModel(variant, {
      crashAt,
      ...(holdAt ? { holdAt } : {}),
      onCall: report.modelCall,
    });
    await runResearch({ recorder, variant, model, ...ask });
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

/**
 * In the crash child: research asks for both parts at once; the details call dies once the
 * outline's answer is in (its completion committed), so the crash leaves one inner call
 * answered and the other in flight.
 */
export function crashInsideSecondCallAtOnce(store: EventStore): Promise<void> {
  let outlineAnswered!: () => void;
  const outline = new Promise<void>((resolve) => {
    outlineAnswered = resolve;
  });
  return crashingResearch(
    "atOnce",
    async (asked) => {
      if (asked !== "sub:a details") return false;
      await outline;
      return true;
    },
    {
      onAnswer: (part) => {
        if (part === "outline") outlineAnswered();
      },
    },
  )(store);
}

/** In the crash child: research streams both parts at once, and dies once both are in. */
export const crashAfterStreamedCallsAtOnce = crashingResearch("atOnce", () => false, {
  stream: true,
  afterParts: crashHere,
});

/**
 * In the crash child: research (one inner call) finishes, and the process dies right after the
 * first of its two ends is committed: its child run's `run.completed`, or its own outcome.
 */
export function crashAfterResearchEnd(end: "run.completed" | "tool.completed") {
  return (store: EventStore): Promise<void> =>
    crashingResearch("single", () => false)(crashAfterAppend(store, (event) => event.type === end));
}

/**
 * In the crash child: research, declared not idempotent, dies inside its inner call: the tool
 * call and the call inside it are both in flight.
 */
export const crashInsideNotIdempotent = crashingResearch(
  "single",
  (asked) => asked.startsWith("sub:"),
  { idempotent: false },
);

/**
 * In the crash child: research races its inner call against a timeout and returns "timed out"
 * while the call (a hung provider) is still in flight; the process dies once research's outcome
 * is committed, the call inside it still in flight on its child run.
 */
export function crashAfterRacedOutcome(store: EventStore): Promise<void> {
  return crashingResearch(
    "single",
    () => false,
    { raceMs: 20 },
    (asked) => (asked.startsWith("sub:") ? new Promise<void>(() => {}) : undefined),
  )(crashAfterAppend(store, (event) => event.type === "tool.completed"));
}

/** The reason `crashAfterAbandonments` abandons research with. */
export const ABANDONED_RESEARCH = "abandoned after the crash";

/**
 * In the crash child, on the ledger `crashInsideNotIdempotent` left: resumes the agent,
 * abandons research by `onUnresolved`, and dies right after the `count`-th abandonment is
 * committed (the first is research's own, the second the call in flight inside it).
 */
export function crashAfterAbandonments(count: number) {
  return async (store: EventStore): Promise<void> => {
    let abandonments = 0;
    const crashing = crashAfterAppend(
      store,
      (event) => event.type === "attempt.abandoned" && ++abandonments === count,
    );
    const recorder = await SessionRecorder.resume({
      store: crashing,
      ...RESEARCH,
      actor: assistant,
    });
    const { model } = researchModel("single", { onCall: report.modelCall });
    await runResearch({
      recorder,
      variant: "single",
      model,
      idempotent: false,
      onUnresolved: () => ({ action: "abandon", reason: ABANDONED_RESEARCH }),
    });
  };
}
