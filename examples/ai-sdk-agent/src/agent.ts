import { appendFileSync } from "node:fs";
import { ledgerMiddleware, wrapTools } from "@agent-ledger/ai-sdk";
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { scriptedModel } from "./scripted-model.js";

export interface AgentOptions {
  store: EventStore;
  sessionId: string;
  runId: string;
  /** Continue a run a dead process left behind (calls recorded before the crash are replayed). */
  resume: boolean;
  mode: "generate" | "stream";
  /** Files that count model calls and tool side effects across processes. */
  callLog: string;
  effectLog: string;
  /** Crash hooks: the test's child process hangs here and gets SIGKILLed. */
  inTool?: (name: string) => Promise<void>;
  inStream?: () => Promise<void>;
}

const actor = { type: "agent" as const, id: "order-support", framework: "ai-sdk" };

/** An order-support agent: look the order up, email the customer, answer. */
export async function runAgent(options: AgentOptions): Promise<{ text: string; steps: number }> {
  const { store, sessionId, runId } = options;
  const recorder = options.resume
    ? await SessionRecorder.resume({ store, sessionId, runId, actor })
    : new SessionRecorder({ store, sessionId, runId, actor });
  const effect = (line: string) => appendFileSync(options.effectLog, `${line}\n`);
  const tools = wrapTools(
    {
      lookupOrder: tool({
        description: "Look an order up",
        inputSchema: z.object({ orderId: z.number() }),
        execute: async ({ orderId }) => {
          await options.inTool?.("lookupOrder");
          effect(`lookupOrder ${orderId}`);
          return { orderId, status: "shipped", carrier: "DHL" };
        },
      }),
      sendEmail: tool({
        description: "Email a customer",
        inputSchema: z.object({ to: z.string(), subject: z.string() }),
        execute: async ({ to, subject }) => {
          await options.inTool?.("sendEmail");
          effect(`sendEmail ${to} ${subject}`);
          return { sent: true };
        },
      }),
    },
    { recorder, idempotent: ["lookupOrder"], effects: { lookupOrder: "read", sendEmail: "write" } },
  );
  const model = wrapLanguageModel({
    model: scriptedModel({
      callLog: options.callLog,
      ...(options.inStream ? { onStreamMiddle: options.inStream } : {}),
    }),
    middleware: ledgerMiddleware({ recorder }),
  });
  const call = {
    model,
    system: "You are an order-support agent.",
    prompt: "Where is order 42? Tell the customer.",
    tools,
    stopWhen: stepCountIs(5),
  };
  let text: string;
  let steps: number;
  if (options.mode === "generate") {
    const result = await generateText(call);
    text = result.text;
    steps = result.steps.length;
  } else {
    let streamError: unknown;
    const result = streamText({
      ...call,
      onError: ({ error }) => {
        streamError = error;
      },
    });
    await result.consumeStream();
    if (streamError) throw streamError;
    text = await result.text;
    steps = (await result.steps).length;
  }
  await recorder.completeRun({ text });
  return { text, steps };
}
