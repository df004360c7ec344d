import {
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import type { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { eventsOf } from "./testing/recorded-events.test.data.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  assistantRecorder as setup,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

describe("ledgerMiddleware with generateText", () => {
  it("records a multi-step run with parallel tool calls, each caused by the completion that asked", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([
      toolCallsResult(
        toolCall("call-1", "weather", { city: "Paris" }),
        toolCall("call-2", "weather", { city: "Oslo" }),
      ),
      textResult("Paris 21, Oslo 9"),
    ]);
    const executed: string[] = [];
    const tools = wrapTools(
      {
        weather: tool({
          description: "weather of a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            executed.push(city);
            await new Promise((resolve) => setTimeout(resolve, 5));
            return { city, celsius: city === "Paris" ? 21 : 9 };
          },
        }),
      },
      { recorder, idempotent: ["weather"], effects: { weather: "read" } },
    );
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "weather?",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Paris 21, Oslo 9");
    expect(executed.sort()).toEqual(["Oslo", "Paris"]);
    const events = await eventsOf(store);
    const firstCompletion = events.find((event) => event.type === "model.completed");
    const requests = events.filter((event) => event.type === "tool.requested");
    expect(requests.map((event) => payload(event).toolCallId).sort()).toEqual(["call-1", "call-2"]);
    for (const request of requests) {
      expect(request.causedByEventId).toBe(firstCompletion?.eventId);
      expect(payload(request).effect).toEqual({ kind: "read", idempotent: true });
    }
    const completions = events.filter((event) => event.type === "tool.completed");
    expect(completions.map((event) => payload(event).result.celsius).sort()).toEqual([21, 9]);
    // The second model request carries both tool results.
    const secondRequest = events.filter((event) => event.type === "model.requested")[1];
    expect(JSON.stringify(payload(secondRequest).request.prompt)).toContain('"celsius":21');
  });

  it("a run whose first call is a tool (an approved call, continued in the next turn's run) starts with run.started", async () => {
    const store = new MemoryEventStore();
    const send = () =>
      tool({
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
        execute: async () => "sent",
      });
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "send", { to: "bob" })),
      textResult("emailed bob"),
    ]);
    // Turn 1, its own run: the SDK stops at the approval request.
    const turn1 = new SessionRecorder({ store, sessionId: "s1", runId: "turn-1", actor });
    const first = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder: turn1 }) }),
      prompt: "email bob",
      tools: wrapTools({ send: send() }, { recorder: turn1 }),
    });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    expect(request?.type).toBe("tool-approval-request");
    // Turn 2, a new run: the SDK runs the approved tool before calling the model.
    const turn2 = new SessionRecorder({ store, sessionId: "s1", runId: "turn-2", actor });
    const second = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder: turn2 }) }),
      messages: [
        { role: "user", content: "email bob" },
        ...first.response.messages,
        {
          role: "tool",
          content: [
            {
              type: "tool-approval-response",
              approvalId: (request as { approvalId: string }).approvalId,
              approved: true,
            },
          ],
        },
      ],
      tools: wrapTools({ send: send() }, { recorder: turn2 }),
    });
    expect(second.text).toBe("emailed bob");
    const events = await readWholeRun(store, { sessionId: "s1", runId: "turn-2" });
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "tool.completed",
      "model.requested",
      "model.completed",
    ]);
  });

  it("records a tool error, rethrows it, and the SDK hands it to the model", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "charge", { amount: 5 })),
      textResult("could not charge"),
    ]);
    const tools = wrapTools(
      {
        charge: tool({
          inputSchema: z.object({ amount: z.number() }),
          execute: async (): Promise<string> => {
            throw new Error("card declined");
          },
        }),
      },
      { recorder },
    );
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "charge",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("could not charge");
    const events = await eventsOf(store);
    const failed = events.find((event) => event.type === "tool.failed");
    expect(payload(failed).error.message).toBe("card declined");
    expect(payload(failed).toolCallId).toBe("call-1");
    expect(result.steps[0]?.content.some((part) => part.type === "tool-error")).toBe(true);
  });

  it("a tool result the ledger cannot hold is recorded as the tool.failed the model is told about, not left in flight", async () => {
    const store = new MemoryEventStore();
    const address = { sessionId: "s1", runId: "r1" };
    const effects: string[] = [];
    // A legitimate AI SDK tool: a rich result (here a cycle) that toModelOutput summarises.
    const makeTools = () => ({
      createInvoice: tool({
        inputSchema: z.object({ amount: z.number() }),
        execute: async ({ amount }) => {
          effects.push(`invoice ${amount}`);
          const invoice: Record<string, unknown> = { id: "inv-1", amount };
          invoice.self = invoice;
          return invoice;
        },
        toModelOutput: ({ output }) => ({ type: "text", value: String(output.id) }),
      }),
    });
    const run = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "bill 5",
        tools: wrapTools(makeTools(), { recorder }),
        stopWhen: stepCountIs(3),
      });
    const script = () => [
      toolCallsResult(toolCall("call-1", "createInvoice", { amount: 5 })),
      textResult("billed"),
    ];
    const first = await run(
      new SessionRecorder({ store, actor, ...address }),
      scriptedModel(script()).model,
    );
    expect(first.text).toBe("billed");
    const toolError = first.steps[0]?.content.find((part) => part.type === "tool-error");
    expect(LedgerError.isInstance(toolError?.error, "non-serializable")).toBe(true);
    const failed = (await eventsOf(store)).find((event) => event.type === "tool.failed");
    expect(payload(failed).error.message).toContain("$.result.self");
    expect((await inspectSession(store, "s1")).unresolved).toEqual([]);

    // Re-executed on resume: answered from the ledger, the invoice is not created again.
    const replayModel = scriptedModel([]);
    const replayed = await run(
      await SessionRecorder.resume({ store, actor, ...address }),
      replayModel.model,
    );
    expect(replayed.text).toBe("billed");
    expect(replayModel.calls).toBe(0);
    expect(effects).toEqual(["invoice 5"]);
  });
});
