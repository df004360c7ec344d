import { inspectSession, toAtif } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import {
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  recordingAssistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// Core's projections read what this adapter records (no input.received: the prompt is in
// each model request).
describe("ATIF of a recorded generateText conversation", () => {
  it("has the user's messages as user steps, each before the agent steps it led to", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "weather", { city: "Paris" })),
      textResult("Paris: 21"),
      textResult("Oslo: 9"),
    ]);
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      {
        weather: tool({
          description: "weather of a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, celsius: 21 }),
        }),
      },
      { recorder },
    );
    const messages: ModelMessage[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await generateText({
      model: wrapped,
      system: "be brief",
      messages,
      tools,
      stopWhen: stepCountIs(3),
    });
    messages.push(...first.response.messages, { role: "user", content: "And in Oslo?" });
    await generateText({ model: wrapped, system: "be brief", messages, tools });

    const trajectory = await toAtif(store, "s");
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ["system", "be brief"],
      ["user", "Weather in Paris?"],
      ["agent", ""],
      ["agent", "Paris: 21"],
      ["user", "And in Oslo?"],
      ["agent", "Oslo: 9"],
    ]);
    expect(trajectory.steps.map((step) => step.step_id)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("ATIF of a reasoning model's answer", () => {
  it("keeps the reasoning apart from the message, in reasoning_content", async () => {
    const { store, recorder } = recordingAssistant();
    const answer = textResult("42");
    answer.content = [{ type: "reasoning", text: "6 times 7 is 42." }, ...answer.content];
    const { model } = scriptedModel([answer]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "What is 6 x 7?",
    });
    expect(result.text).toBe("42");
    const step = (await toAtif(store, "s")).steps.find((each) => each.source === "agent");
    expect(step?.message).toBe("42");
    expect(step?.reasoning_content).toBe("6 times 7 is 42.");
  });
});

describe("inspection of a recorded generateText call", () => {
  it("names the model the call went to (the AI SDK records it as { provider, modelId })", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([textResult("hello")]);
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    await generateText({ model: wrapped, prompt: "hi" });
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.steps[0]?.attempts[0]).toMatchObject({
      kind: "model",
      status: "completed",
      name: "scripted-1",
    });
  });

  it("says the tokens the SDK reported for each call, generated or streamed, and their sums", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "weather", { city: "Paris" })),
      textResult("Paris: 21"),
      textResult("and Oslo: 9"),
    ]);
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 21 }) },
      { recorder },
    );
    await generateText({ model: wrapped, prompt: "Paris?", tools, stopWhen: stepCountIs(2) });
    await streamText({ model: wrapped, prompt: "Oslo?" }).consumeStream();
    const inspection = await inspectSession(store, "s");
    const calls = inspection.runs[0]?.steps
      .flatMap((step) => step.attempts)
      .filter((attempt) => attempt.kind === "model");
    expect(calls?.map((call) => call.usage)).toEqual([
      { inputTokens: 10, outputTokens: 3 },
      { inputTokens: 10, outputTokens: 5 },
      { inputTokens: 10, outputTokens: 5 },
    ]);
    expect(inspection.runs[0]?.usage).toEqual({ inputTokens: 30, outputTokens: 13 });
    expect(inspection.usage).toEqual({ inputTokens: 30, outputTokens: 13 });
  });
});

describe("OpenTelemetry of a recorded generateText with tools", () => {
  it("gives a provider-defined tool's span gen_ai.tool.type extension, an app's own tool's function", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([
      toolCallsResult(
        toolCall("call-1", "bash", { command: "ls" }),
        toolCall("call-2", "weather", { city: "Paris" }),
      ),
      textResult("done"),
    ]);
    const tools = wrapTools(
      {
        // A tool whose schema is the provider's (as Anthropic's bash), run by the app.
        bash: tool({
          type: "provider",
          id: "anthropic.bash_20250124",
          args: {},
          inputSchema: z.object({ command: z.string() }),
          execute: async ({ command }) => `ran ${command}`,
        }),
        weather: tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, celsius: 21 }),
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "list and weather",
      tools,
      stopWhen: stepCountIs(2),
    });
    const spans = await exportedSpans(store, "s");
    const toolType = (name: string) =>
      spans.find((span) => span.name === `execute_tool ${name}`)?.attributes["gen_ai.tool.type"];
    expect([toolType("bash"), toolType("weather")]).toEqual(["extension", "function"]);
  });
});
