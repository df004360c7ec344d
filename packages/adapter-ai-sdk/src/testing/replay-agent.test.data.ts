// The agent of the replay tests, shared by the tests (the live run, the resume) and by the
// crash child (the run it is SIGKILLed in): three model calls, two parallel tool calls then a
// third, with side effects counted outside the recorder.
import {
  type EventStore,
  type LedgerEvent,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import type { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type WrapToolsOptions, wrapTools } from "../wrap-tools.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import {
  assistant,
  payload,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the replay agent records. */
export const address = { sessionId: "s1", runId: "r1" };

export const eventsOf = (store: EventStore): Promise<LedgerEvent[]> => readWholeRun(store, address);

export const script = (): LanguageModelV3GenerateResult[] => [
  toolCallsResult(toolCall("c1", "lookup", { key: "a" }), toolCall("c2", "send", { to: "bob" })),
  toolCallsResult(toolCall("c3", "lookup", { key: "b" })),
  textResult("done: A, sent, B"),
];

/**
 * Tools with side effects counted outside the recorder (`effects`, and `onEffect` as each
 * happens). The call `crashIn` does not have its effect: it waits for `crash`, which never
 * settles, as a process dies in the middle of the call.
 */
export function makeTools(
  options: {
    crashIn?: string;
    crash?: () => Promise<never>;
    onEffect?: (effect: string) => void;
  } = {},
) {
  const effects: string[] = [];
  const act = async (toolCallId: string, effect: string) => {
    if (options.crashIn === toolCallId && options.crash) await options.crash();
    effects.push(effect);
    options.onEffect?.(effect);
  };
  const tools = {
    lookup: tool({
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }, { toolCallId }) => {
        await act(toolCallId, `lookup:${key}`);
        return key.toUpperCase();
      },
    }),
    send: tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async ({ to }, { toolCallId }) => {
        await act(toolCallId, `send:${to}`);
        return "sent";
      },
    }),
  };
  return { tools, effects };
}

export async function run(options: {
  recorder: SessionRecorder;
  model: MockLanguageModelV3;
  tools: ReturnType<typeof makeTools>["tools"];
  wrap?: Partial<WrapToolsOptions>;
  prompt?: string;
}) {
  return generateText({
    model: wrapLanguageModel({
      model: options.model,
      middleware: ledgerMiddleware({ recorder: options.recorder }),
    }),
    prompt: options.prompt ?? "do it",
    tools: wrapTools(options.tools, {
      recorder: options.recorder,
      idempotent: ["lookup"],
      ...options.wrap,
    }),
    stopWhen: stepCountIs(5),
  });
}

/**
 * Resolves once an event matching `when` is in the agent's run on `store`. Gives up after a
 * few seconds: the child then goes on past its crash point and the test fails saying so,
 * instead of waiting for its timeout.
 */
async function recorded(store: EventStore, when: (event: LedgerEvent) => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await eventsOf(store)).some(when)) {
    if (Date.now() > deadline) throw new Error("the awaited event never reached the ledger");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * In the crash child: the script's run, recording to `store` and reporting its effects and
 * model calls, dies inside the tool call `toolCallId`, once `ready` has resolved.
 */
async function crashInside(
  store: EventStore,
  toolCallId: string,
  ready: () => Promise<void> = async () => undefined,
): Promise<void> {
  const model = scriptedModel(script(), { onCall: report.modelCall });
  const { tools } = makeTools({
    crashIn: toolCallId,
    crash: async () => {
      await ready();
      return crashHere();
    },
    onEffect: report.effect,
  });
  await run({
    recorder: new SessionRecorder({ store, actor: assistant, ...address }),
    model: model.model,
    tools,
  });
}

/** Dies inside lookup c3 (idempotent), the second step's call: the first step has finished. */
export const crashInsideLookupC3 = (store: EventStore) => crashInside(store, "c3");

/**
 * Dies inside send c2 (not idempotent), once the parallel lookup c1 has finished: its
 * tool.completed is in the ledger, so only send c2 is left in flight.
 */
export const crashInsideSendC2 = (store: EventStore) =>
  crashInside(store, "c2", () =>
    recorded(
      store,
      (event) => event.type === "tool.completed" && payload(event).toolCallId === "c1",
    ),
  );
