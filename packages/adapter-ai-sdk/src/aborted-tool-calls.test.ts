import { LedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// The user presses stop while `charge` waits for the bank's confirmation: the charge went out.
// A tool its caller's abortSignal cut off has an unknown outcome, as after a crash: no
// `tool.failed` (the resumed model would be told it failed and charge again).

const address = { sessionId: "shop", runId: "turn-1" };

/** A model that asks for a charge, asks again for one it was told failed, else says "charged". */
function chargingModel() {
  const answer = (prompt: LanguageModelV3Prompt) => {
    const last = prompt.at(-1);
    if (last?.role === "user") return toolCallsResult(toolCall("c1", "charge", { cents: 500 }));
    const output = last?.role === "tool" ? last.content[0] : undefined;
    if (output?.type === "tool-result" && output.output.type === "error-text")
      return toolCallsResult(toolCall("c2", "charge", { cents: 500 }));
    return textResult("charged");
  };
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => answer(prompt),
    doStream: async ({ prompt }) => ({ stream: partsStream(streamPartsOf(answer(prompt))) }),
  });
}

/** The bank: each charge goes out at once, its confirmation takes 200 ms (cut off by abort). */
function bank() {
  const charges: number[] = [];
  const tools = {
    charge: tool({
      inputSchema: z.object({ cents: z.number() }),
      execute: async ({ cents }, { abortSignal }) => {
        charges.push(cents);
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 200);
          abortSignal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(abortSignal.reason);
          });
        });
        return "ok";
      },
    }),
  };
  return { tools, charges };
}

const toolEvents = async (store: MemoryEventStore) =>
  (await store.readRun(address)).events
    .filter((event) => event.type.startsWith("tool.") || event.type === "attempt.abandoned")
    .map((event) => event.type);

/**
 * One turn of the shop (`how`: generateText or streamText), stopped by `signal` if given: the
 * error it ended with (generateText's rejection, the stream's first error), if any.
 */
async function turn(
  recorder: SessionRecorder,
  tools: ReturnType<typeof bank>["tools"],
  how: "generate" | "stream",
  { signal, idempotent }: { signal?: AbortSignal; idempotent?: string[] } = {},
): Promise<{ text?: string; error?: unknown }> {
  const options = {
    model: wrapLanguageModel({
      model: chargingModel(),
      middleware: ledgerMiddleware({ recorder }),
    }),
    tools: wrapTools(tools, {
      recorder,
      effects: { charge: "write" },
      ...(idempotent ? { idempotent } : {}),
    }),
    prompt: "charge me 5",
    stopWhen: stepCountIs(4),
    ...(signal ? { abortSignal: signal } : {}),
  } as const;
  if (how === "generate")
    return generateText(options).then(
      ({ text }) => ({ text }),
      (error: unknown) => ({ error }),
    );
  const errors: unknown[] = [];
  const result = streamText({ ...options, onError: ({ error }) => void errors.push(error) });
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text;
    if (part.type === "tool-error") errors.push(part.error);
  }
  return errors.length > 0 ? { text, error: errors[0] } : { text };
}

async function chargeAndStop(store: MemoryEventStore, how: "generate" | "stream") {
  const recorder = new SessionRecorder({ store, ...address, actor });
  const { tools, charges } = bank();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const ended = await turn(recorder, tools, how, { signal: controller.signal });
  if (how === "generate") expect(ended.error).toMatchObject({ name: "AbortError" });
  return { recorder, charges };
}

describe("a tool call its caller aborted", () => {
  for (const how of ["generate", "stream"] as const)
    it(`(${how}Text) is left in flight, not failed: the resume refuses it instead of charging again`, async () => {
      const store = new MemoryEventStore();
      const live = await chargeAndStop(store, how);
      expect(live.charges).toEqual([500]);
      expect(await toolEvents(store)).toEqual(["tool.requested"]);
      // The live turn cannot complete the run over a call that may have happened.
      const refusal = await live.recorder.completeRun({ text: "" }).catch((error) => error);
      expect(LedgerError.isInstance(refusal, "unresolved-attempt")).toBe(true);
      expect(refusal.message).toContain("its caller's abortSignal stopped it while it ran");
      expect(refusal.message).toContain(
        `agent-ledger resolve --abandon "reason" -- shop ${refusal.attemptId}\` (with --store <your store's URL>`,
      );
      expect(live.recorder.status).toBe("running");

      // The turn sent again: the call is refused until a person decides it.
      const resumed = await SessionRecorder.resume({ store, ...address, actor });
      const { tools, charges } = bank();
      const result = (await turn(resumed, tools, how)).error;
      expect(LedgerError.isInstance(result, "unresolved-attempt")).toBe(true);
      // Sent again to the same process, which knows it stopped the call: no crash is claimed.
      expect((result as LedgerError).message).toContain(
        "tool call charge (c1) was left without an outcome by this process, not cut off by a crash: its caller's abortSignal stopped it while it ran",
      );
      expect(charges).toEqual([]);
      expect(await toolEvents(store)).toEqual(["tool.requested"]);
    });

  it("an idempotent tool its caller aborted runs again on resume", async () => {
    const store = new MemoryEventStore();
    await chargeAndStop(store, "generate");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const { tools, charges } = bank();
    const { text } = await turn(resumed, tools, "generate", { idempotent: ["charge"] });
    expect(text).toBe("charged");
    expect(charges).toEqual([500]);
  });
  it("decided in the same process (abandoned once its effect is checked), the run completes", async () => {
    // The refusal to complete lasts while the call is undecided, not for the recorder's life.
    const store = new MemoryEventStore();
    const live = await chargeAndStop(store, "generate");
    const refusal = await live.recorder.completeRun({ text: "" }).catch((error) => error);
    expect(LedgerError.isInstance(refusal, "unresolved-attempt")).toBe(true);
    await live.recorder.abandon(refusal.attempt, "the bank shows the charge: it went out");
    await live.recorder.completeRun({ text: "" });
    expect(live.recorder.status).toBe("completed");
  });
});
