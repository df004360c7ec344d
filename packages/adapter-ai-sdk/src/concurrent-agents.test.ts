import {
  type Actor,
  LedgerError,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { type LanguageModel, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant,
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "two-agents", runId: "r1" };

/** Asks for one `greet` call, then answers `hello <who>`; answers by prompt, not by order. */
function greeterModel() {
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }: LanguageModelV3CallOptions) => {
      const user = JSON.stringify(prompt.find((message) => message.role === "user"));
      const who = user.includes("alice") ? "alice" : "bob";
      const answered = prompt.some((message) => message.role === "tool");
      const result = answered
        ? textResult(`hello ${who}`)
        : toolCallsResult(toolCall(`call_${who}`, "greet", { who }));
      return { stream: partsStream(streamPartsOf(result)) };
    },
  });
  return model;
}

/** One agent's streamText on `recorder`: its text, and the errors its stream reported. */
async function runAgent(recorder: SessionRecorder, model: MockLanguageModelV3, who: string) {
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    tools: wrapTools(
      {
        greet: tool({
          inputSchema: z.object({ who: z.string() }),
          execute: async ({ who: name }) => `greeted ${name}`,
        }),
      },
      { recorder },
    ),
    prompt: `hi ${who}`,
    stopWhen: stepCountIs(3),
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  await result.consumeStream();
  const text = await Promise.resolve(result.text).catch(() => "");
  return { text, errors };
}

const actorOf = (id: string): Actor => ({ type: "agent", id, framework: "ai-sdk" });

describe("two agents running at the same time", () => {
  it("refuses the second agent's call on one recorder before anything is recorded", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor: assistant });
    const model = greeterModel();
    const [alice, bob] = await Promise.all([
      runAgent(recorder, model, "alice"),
      runAgent(recorder, model, "bob"),
    ]);
    expect(alice).toEqual({ text: "hello alice", errors: [] });
    expect(bob.text).toBe("");
    expect(bob.errors).toHaveLength(1);
    const refusal = bob.errors[0];
    expect(LedgerError.isInstance(refusal, "invalid-argument")).toBe(true);
    expect((refusal as LedgerError & { path: string }).path).toBe("$.recorder");
    expect((refusal as Error).message).toContain("recorder.child(");
    // Bob's call reached neither the provider nor the ledger.
    expect(model.doStreamCalls).toHaveLength(2);
    const events = await readWholeSession(store, address.sessionId);
    const requests = events.filter((event) => event.type === "model.requested");
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests)).not.toContain("hi bob");
  });

  it("runs and resumes them side by side, each on its own child recorder", async () => {
    const store = new MemoryEventStore();
    const root = new SessionRecorder({ store, ...address, actor: assistant });
    await root.startRun();
    const live = greeterModel();
    const agents = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      Promise.all(
        ["alice", "bob"].map((who) =>
          runAgent(recorder.child({ actor: actorOf(who) }), model, who),
        ),
      );
    expect((await agents(root, live)).map(({ text }) => text)).toEqual([
      "hello alice",
      "hello bob",
    ]);
    expect(live.doStreamCalls).toHaveLength(4);

    const resumed = greeterModel();
    const again = await agents(
      await SessionRecorder.resume({ store, ...address, actor: assistant }),
      resumed,
    );
    expect(again).toEqual([
      { text: "hello alice", errors: [] },
      { text: "hello bob", errors: [] },
    ]);
    expect(resumed.doStreamCalls).toHaveLength(0);
  });
});

describe("a stream its consumer left open", () => {
  const prompt: LanguageModelV3CallOptions["prompt"] = [
    { role: "user", content: [{ type: "text", text: "count" }] },
  ];

  /** Opens a model stream directly, reads its first part, and leaves it open. */
  async function leaveOpen(model: ReturnType<typeof wrapLanguageModel>, abortSignal?: AbortSignal) {
    const { stream } = await model.doStream({ prompt, ...(abortSignal ? { abortSignal } : {}) });
    const reader = stream.getReader();
    await reader.read();
    reader.releaseLock();
    return stream;
  }

  const next = (model: LanguageModel) => streamText({ model, prompt: "next" }).text;

  it("holds the run until it is cancelled or aborted; the refusal says so", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor: assistant });
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({
        doStream: async () => ({ stream: partsStream(streamPartsOf(textResult("one two three"))) }),
      }),
      middleware: ledgerMiddleware({ recorder }),
    });

    const unread = await leaveOpen(model);
    const refusal = await Promise.resolve(model.doStream({ prompt })).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(refusal, "invalid-argument")).toBe(true);
    const message = (refusal as Error).message;
    expect(message).toContain("was still open: not read to its end, cancelled or aborted");
    // What the open call is, and for streamObject which stream to cancel.
    expect(message).toContain("(a text stream)");
    expect(message).toContain("for streamObject, its partialObjectStream");
    expect(message).toContain("recorder.child(");
    // Cancelled, it is recorded as failed with what had streamed, and the run goes on.
    await unread.cancel("left unread");
    expect(await next(model)).toBe("one two three");

    const controller = new AbortController();
    await leaveOpen(model, controller.signal);
    controller.abort(new Error("user left"));
    expect(await next(model)).toBe("one two three");

    const events = await readWholeSession(store, address.sessionId);
    const outcomes = events.filter((event) => /^model\.(completed|failed)$/.test(event.type));
    expect(outcomes.map((event) => event.type).sort()).toEqual([
      "model.completed",
      "model.completed",
      "model.failed",
      "model.failed",
    ]);
    const failures = outcomes
      .filter((event) => event.type === "model.failed")
      .map((event) => (event.payload as { error: { message: string } }).error.message);
    expect(failures.sort()).toEqual(["left unread", "user left"]);
    // The refused call reached neither the provider nor the ledger.
    expect(events.filter((event) => event.type === "model.requested")).toHaveLength(4);
  });
});
