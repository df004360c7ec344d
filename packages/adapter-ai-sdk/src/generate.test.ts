import { LedgerError } from "@agent-ledger/core";
import { generateText, Output, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  eventsOf,
  expectUnholdableResponseRecordedAsFailure,
} from "./testing/recorded-events.test.data.js";
import {
  failsOnceThenAnswers,
  payload,
  scriptedModel,
  assistantRecorder as setup,
  textResult,
} from "./testing/scripted-model.test.data.js";

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
