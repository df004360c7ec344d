import {
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
  StoreUnavailableError,
} from "@agent-ledger/core";
import { generateText, Output, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  eventsOf,
  expectUnholdableResponseRecordedAsFailure,
} from "./testing/recorded-events.test.data.js";
import {
  assistant as actor,
  failsOnceThenAnswers,
  payload,
  scriptedModel,
  assistantRecorder as setup,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

describe("ledgerMiddleware with generateText", () => {
  it("records the request before the call and the completion after it", async () => {
    const { store, recorder } = setup();
    let seenAtCall: string[] = [];
    const base = scriptedModel([textResult("hello there")]);
    const model = new MockLanguageModelV3({
      provider: "scripted",
      modelId: "scripted-1",
      doGenerate: async (options) => {
        seenAtCall = (await eventsOf(store)).map((event) => event.type);
        return base.model.doGenerate(options);
      },
    });
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      system: "be brief",
      prompt: "hi",
      temperature: 0.2,
      maxOutputTokens: 50,
      headers: { authorization: "Bearer secret" },
    });
    expect(result.text).toBe("hello there");
    expect(seenAtCall).toEqual(["run.started", "model.requested"]);
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    const request = payload(events[1]).request;
    expect(request.prompt[0]).toEqual({ role: "system", content: "be brief" });
    expect(request.prompt[1].content[0]).toEqual({ type: "text", text: "hi" });
    expect(request.temperature).toBe(0.2);
    expect(request.maxOutputTokens).toBe(50);
    expect(request.model).toEqual({ provider: "scripted", modelId: "scripted-1" });
    expect(JSON.stringify(request)).not.toContain("secret");
    expect(request.headers).toBeUndefined();
    const response = payload(events[2]).response;
    expect(response.content).toEqual([{ type: "text", text: "hello there" }]);
    expect(response.finishReason).toEqual({ unified: "stop", raw: "stop" });
    expect(response.usage.inputTokens.total).toBe(10);
    expect(response.response).toEqual({
      id: "resp-11",
      modelId: "scripted",
      timestamp: "2023-11-14T22:13:20.000Z",
    });
    expect(events[2]?.attemptId).toBe(events[1]?.attemptId);
  });

  it("records model.failed and rethrows a provider error", async () => {
    const { store, recorder } = setup();
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error("provider exploded");
      },
    });
    await expect(
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "hi",
        maxRetries: 0,
      }),
    ).rejects.toThrow("provider exploded");
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
    expect(payload(events[2]).error.message).toBe("provider exploded");
  });

  it("records each retry of a retryable error as a new attempt of the same step", async () => {
    const { store, recorder } = setup();
    const flaky = failsOnceThenAnswers(
      { message: "overloaded", statusCode: 529 },
      textResult("second time lucky"),
    );
    const result = await generateText({
      model: wrapLanguageModel({ model: flaky.model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "hi",
      maxRetries: 1,
    });
    expect(result.text).toBe("second time lucky");
    expect(flaky.calls).toBe(2);
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);
    const [, first, failed, second] = events;
    expect(second?.stepId).toBe(first?.stepId);
    expect(second?.retryOf).toBe(first?.attemptId);
    expect(second?.attemptId).not.toBe(first?.attemptId);
    expect(failed?.metadata).toEqual({
      aiSdk: { apiCallError: true, isRetryable: true, statusCode: 529 },
    });
  });

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

  it("a model response the ledger cannot hold is recorded as the call's failure, not left in flight; the run goes on", async () => {
    const { store, recorder } = setup();
    const answers = [
      // A provider that reports a counter as a bigint: not JSON.
      { ...textResult("first"), providerMetadata: { acme: { units: 10n as never } } },
      textResult("second"),
    ];
    let calls = 0;
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({
        doGenerate: async () => answers[calls++] ?? textResult(""),
      }),
      middleware: ledgerMiddleware({ recorder }),
    });
    const error = await generateText({ model, prompt: "one", maxRetries: 0 }).catch(
      (caught: unknown) => caught,
    );
    expect(LedgerError.isInstance(error, "non-serializable")).toBe(true);
    expect((error as LedgerError).path).toBe("$.providerMetadata.acme.units");
    expect((await generateText({ model, prompt: "two", maxRetries: 0 })).text).toBe("second");
    expect(calls).toBe(2);
    await expectUnholdableResponseRecordedAsFailure(store);
  });

  it("records structured output requests (responseFormat json with schema)", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([textResult('{"name":"Ada","age":36}')]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "who?",
      output: Output.object({ schema: z.object({ name: z.string(), age: z.number() }) }),
    });
    expect(result.output).toEqual({ name: "Ada", age: 36 });
    const events = await eventsOf(store);
    const request = payload(events.find((event) => event.type === "model.requested")).request;
    expect(request.responseFormat.type).toBe("json");
    expect(request.responseFormat.schema.properties.name.type).toBe("string");
  });
});

class FailingStore extends MemoryEventStore {
  failAppends = false;
  failType: string | undefined;
  override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
    if (this.failAppends || request.events.some((event) => event.type === this.failType))
      throw new StoreUnavailableError("disk on fire");
    return super.append(request);
  }
}

describe("fail closed", () => {
  it("a request that is not plain JSON is non-serializable with the exact path, and the provider is not called", async () => {
    const { store, recorder } = setup();
    const scripted = scriptedModel([textResult("never")]);
    const error = await generateText({
      model: wrapLanguageModel({
        model: scripted.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "hi",
      providerOptions: { acme: { budget: 10n } as never },
      maxRetries: 0,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "non-serializable")).toBe(true);
    expect((error as LedgerError).path).toBe("$.request.providerOptions.acme.budget");
    expect(scripted.calls).toBe(0);
    expect((await eventsOf(store)).map((event) => event.type)).toEqual(["run.started"]);
  });

  it("does not call the provider when model.requested cannot be committed", async () => {
    const store = new FailingStore();
    store.failAppends = true;
    const { recorder } = setup(store);
    const scripted = scriptedModel([textResult("never")]);
    const error = await generateText({
      model: wrapLanguageModel({
        model: scripted.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "hi",
      maxRetries: 2,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect(scripted.calls).toBe(0);
  });

  it("does not run a tool whose request cannot be committed, and refuses the next model call", async () => {
    const store = new FailingStore();
    const { recorder } = setup(store);
    const scripted = scriptedModel([
      toolCallsResult(toolCall("call-1", "send", { to: "bob" })),
      textResult("sent"),
    ]);
    let sent = 0;
    const tools = wrapTools(
      {
        send: tool({
          inputSchema: z.object({ to: z.string() }),
          execute: async () => {
            sent++;
            return "ok";
          },
        }),
      },
      { recorder },
    );
    store.failType = "tool.requested";
    const model = scripted.model;
    const error = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "send",
      tools,
      stopWhen: stepCountIs(3),
    }).catch((caught: unknown) => caught);
    expect(sent).toBe(0);
    expect(scripted.calls).toBe(1);
    const types = (await eventsOf(store)).map((event) => event.type);
    expect(types).toEqual(["run.started", "model.requested", "model.completed"]);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
  });
});
