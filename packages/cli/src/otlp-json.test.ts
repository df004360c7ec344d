import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { toOtlpJson } from "./otlp-json.js";

describe("toOtlpJson", () => {
  it("writes the GenAI conventions' double attributes as doubleValue even when whole", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const span = provider.getTracer("test").startSpan("chat m", {
      attributes: {
        "gen_ai.request.temperature": 1,
        "gen_ai.request.top_p": 1,
        "gen_ai.request.top_k": 40,
        "gen_ai.request.frequency_penalty": 0,
        "gen_ai.request.presence_penalty": 0.5,
        "gen_ai.request.max_tokens": 1024,
        "gen_ai.usage.input_tokens": 12,
      },
    });
    span.end();
    await provider.forceFlush();
    const request = toOtlpJson(exporter.getFinishedSpans());
    const attributes = request.resourceSpans[0]?.scopeSpans[0]?.spans[0]?.attributes ?? [];
    expect(Object.fromEntries(attributes.map(({ key, value }) => [key, value]))).toEqual({
      "gen_ai.request.temperature": { doubleValue: 1 },
      "gen_ai.request.top_p": { doubleValue: 1 },
      "gen_ai.request.top_k": { doubleValue: 40 },
      "gen_ai.request.frequency_penalty": { doubleValue: 0 },
      "gen_ai.request.presence_penalty": { doubleValue: 0.5 },
      // Counts stay ints.
      "gen_ai.request.max_tokens": { intValue: "1024" },
      "gen_ai.usage.input_tokens": { intValue: "12" },
    });
  });
});
