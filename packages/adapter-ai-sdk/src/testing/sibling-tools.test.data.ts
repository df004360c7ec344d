// The agent of the sibling-outcome tests, shared by the tests (the resumes) and by the crash
// child (the run it is SIGKILLed in): one model step asks for two tools at once, a sibling
// (lookup, idempotent; research, idempotent, which asks the model inside; or charge, not
// idempotent) and send_email (not idempotent); once the tools have answered, the model says
// "All done". Effects are counted outside the recorder.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import {
  compiledBeside,
  HaltingStore,
  haltHere,
  killAtMarker,
  readReports,
  reportToParent,
} from "@agent-ledger/core/testing";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import {
  generateText,
  type LanguageModel,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type WrapToolsOptions, wrapTools } from "../wrap-tools.js";
import {
  assistant,
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the agent records. */
export const SIBLINGS = { sessionId: "s-siblings", runId: "r-siblings" };

/** `generateText` or `streamText`. */
export type Mode = "generate" | "stream";

/**
 * The tool asked for beside send_email: lookup (idempotent, a read), research (idempotent, it
 * asks the model through the same middleware once it has had its effect) or charge (not
 * idempotent).
 */
export type Sibling = "lookup" | "research" | "charge";

const siblingCalls = {
  lookup: toolCall("c1", "lookup", { order: 42 }),
  research: toolCall("c1", "research", { order: 42 }),
  charge: toolCall("c1", "charge", { amount: 10 }),
};

/**
 * The model: both tool calls at once, then, with their results in the prompt, "All done"; asked
 * inside research, what it knows of the order.
 */
export function siblingModel(sibling: Sibling) {
  let calls = 0;
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    calls++;
    if (prompt.some((message) => message.role === "tool")) return textResult("All done");
    if (JSON.stringify(prompt).includes("Research order")) return textResult("order 42 shipped");
    return toolCallsResult(siblingCalls[sibling], toolCall("c2", "send_email", { to: "bob" }));
  };
  const model = new MockLanguageModelV3({
    provider: "scripted",
    modelId: "scripted-1",
    doGenerate: async (options) => answer(options),
    doStream: async (options) => ({ stream: partsStream(streamPartsOf(answer(options))) }),
  });
  return {
    model,
    /** Calls that reached the provider. */
    get calls() {
      return calls;
    },
  };
}

/**
 * The four tools. Each has its effect first (`onEffect`), then waits for `afterEffect` (given
 * the tool's name) before it returns (research asks `inner.model` then): the crash child holds
 * the sibling there and dies inside send_email; a resume lets the sibling return a little later
 * than the refusal beside it.
 */
export function siblingTools(options: {
  onEffect: (effect: string) => void;
  afterEffect: (name: string) => Promise<void>;
  /** The agent's model as its run wraps it (`runSiblings` sets it), for research to ask. */
  inner?: { model?: LanguageModel };
}) {
  const act = async (name: string, effect: string) => {
    options.onEffect(effect);
    await options.afterEffect(name);
  };
  return {
    lookup: tool({
      inputSchema: z.object({ order: z.number() }),
      execute: async ({ order }) => {
        await act("lookup", `lookup ${order}`);
        return { order, status: "shipped" };
      },
    }),
    research: tool({
      inputSchema: z.object({ order: z.number() }),
      execute: async ({ order }) => {
        await act("research", `research ${order}`);
        const model = options.inner?.model;
        if (model === undefined) throw new Error("research needs inner.model");
        const { text } = await generateText({ model, prompt: `Research order ${order}` });
        return { order, facts: text };
      },
    }),
    charge: tool({
      inputSchema: z.object({ amount: z.number() }),
      execute: async ({ amount }) => {
        await act("charge", `charge ${amount}`);
        return "charged";
      },
    }),
    send_email: tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async ({ to }) => {
        await act("send_email", `email ${to}`);
        return { sent: true };
      },
    }),
  };
}

/** What the agent's run gave back: its text, and (streamed) the tool results and errors. */
export interface SiblingRun {
  text: string;
  /** `tool-result:<tool>:<output>`, `tool-error:<tool>:<message>`, `error:<code or message>`. */
  parts: string[];
  /** The errors `streamText`'s `onError` heard (the error parts). */
  errors: unknown[];
}

const codeOf = (error: unknown) =>
  (error as { code?: string } | undefined)?.code ?? (error as Error | undefined)?.message;

/**
 * The agent's run on `recorder`: generateText (which rejects when the run stops) or
 * streamText (read to its end, as the README's streaming loop does).
 */
export async function runSiblings(options: {
  recorder: SessionRecorder;
  mode: Mode;
  model: MockLanguageModelV3;
  tools: ReturnType<typeof siblingTools>;
  /** Options of `wrapTools`; `false`: the tools unwrapped (a resume that forgot `wrapTools`). */
  wrap?: Partial<WrapToolsOptions> | false;
  /** Filled with the wrapped model, for a tool that asks it (research). */
  inner?: { model?: LanguageModel };
}): Promise<SiblingRun> {
  const { recorder, mode } = options;
  const model = wrapLanguageModel({
    model: options.model,
    middleware: ledgerMiddleware({ recorder }),
  });
  if (options.inner) options.inner.model = model;
  const settings = {
    model,
    tools:
      options.wrap === false
        ? options.tools
        : wrapTools(options.tools, {
            recorder,
            idempotent: ["lookup", "research"],
            effects: { lookup: "read", research: "read", charge: "write", send_email: "write" },
            ...options.wrap,
          }),
    prompt: "Where is order 42? Then email bob.",
    stopWhen: stepCountIs(5),
  };
  if (mode === "generate") {
    const result = await generateText(settings);
    return { text: result.text, parts: [], errors: [] };
  }
  const errors: unknown[] = [];
  const result = streamText({ ...settings, onError: ({ error }) => void errors.push(error) });
  const parts: string[] = [];
  for await (const part of result.fullStream) {
    if (part.type === "tool-result")
      parts.push(`tool-result:${part.toolName}:${JSON.stringify(part.output)}`);
    else if (part.type === "tool-error")
      parts.push(`tool-error:${part.toolName}:${codeOf(part.error)}`);
    else if (part.type === "error") parts.push(`error:${codeOf(part.error)}`);
  }
  return { text: await result.text, parts, errors };
}

/** The line the crash child prints at its crash point; the test kills it there. */
const CRASH_POINT = "SIBLINGS_CRASH_POINT";

/**
 * In the crash child: the agent's first step, recording to `store` (through a store whose
 * appends hang once the crash point is reached, as a dead process writes nothing more), dies
 * inside send_email once both tools have had their effect; the sibling is still running.
 */
export async function crashWithBothInFlight(
  store: EventStore,
  mode: Mode,
  sibling: Sibling,
): Promise<void> {
  let siblingDone!: () => void;
  const siblingHadEffect = new Promise<void>((resolve) => {
    siblingDone = resolve;
  });
  const inner: { model?: LanguageModel } = {};
  const tools = siblingTools({
    inner,
    onEffect: (effect) => reportToParent({ effect }),
    afterEffect: async (name) => {
      if (name !== "send_email") {
        siblingDone();
        // Slow: still running when the process dies.
        return new Promise<never>(() => {});
      }
      await siblingHadEffect;
      return haltHere(CRASH_POINT);
    },
  });
  const ledger = new HaltingStore(store, CRASH_POINT).store;
  const recorder = new SessionRecorder({ store: ledger, actor: assistant, ...SIBLINGS });
  await runSiblings({ recorder, mode, model: siblingModel(sibling).model, tools, inner });
}

const CHILD = compiledBeside("./sibling-tools.test.child.js", import.meta.url);

/**
 * Runs the agent in a child Node process recording into the SQLite file `path`, and kills it
 * with SIGKILL at its crash point: the effects its tools had, in order.
 */
export async function crashSiblingsInChild(
  mode: Mode,
  sibling: Sibling,
  path: string,
): Promise<string[]> {
  const { stdout } = await killAtMarker([CHILD, mode, sibling, path], CRASH_POINT);
  return readReports<{ effect: string }>(stdout).map((report) => report.effect);
}
