import { MemoryEventStore } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runWithLedger } from "./index.js";
import { runOptions, toolCallEvents } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString("base64");

/** The `execute_tool` span of a run whose one tool returns `output`, and the run's store. */
async function toolSpan(output: unknown) {
  const store = new MemoryEventStore();
  const chart = tool({
    name: "chart",
    description: "the sales chart",
    parameters: z.object({ quarter: z.string() }),
    execute: async () => output as string,
  });
  const agent = new Agent({ name: "analyst", instructions: "read", tools: [chart] });
  const model = new ScriptedModel([
    () => [functionCall("chart", { quarter: "q3" }, "call_1")],
    () => [message("sales rose")],
  ]);
  await runWithLedger(agent, "show the chart", runOptions(store, model));
  const spans = await exportedSpans(store, "s", { includeToolContent: true });
  const span = spans.find((each) => each.attributes["gen_ai.operation.name"] === "execute_tool");
  const [completed] = await toolCallEvents(store, "call_1").then((events) =>
    events.filter((event) => event.type === "tool.completed"),
  );
  return { span, completedId: completed?.eventId };
}

describe("OpenTelemetry tool spans with includeToolContent", () => {
  test("name the bytes of an image the tool returned, keeping the rest of its result", async () => {
    const output = [
      { type: "text", text: "the q3 chart" },
      { type: "image", image: { data: png, mediaType: "image/png" } },
    ];
    const { span, completedId } = await toolSpan(output);
    const result = String(span?.attributes["gen_ai.tool.call.result"]);
    expect(result).not.toContain(png);
    expect(JSON.parse(result)).toEqual([
      { type: "text", text: "the q3 chart" },
      {
        type: "agent_ledger.blob_omitted",
        modality: "image",
        mime_type: "image/png",
        size_bytes: 7,
        event_id: completedId,
      },
    ]);
    expect(JSON.parse(String(span?.attributes["gen_ai.tool.call.arguments"]))).toEqual({
      quarter: "q3",
    });
  });

  test("name the bytes of a file given alone as a data URL, and keep one at a URL", async () => {
    const pdf = { type: "file", file: `data:application/pdf;base64,${png}`, filename: "q3.pdf" };
    const bytes = await toolSpan(pdf);
    expect(JSON.parse(String(bytes.span?.attributes["gen_ai.tool.call.result"]))).toEqual({
      type: "agent_ledger.blob_omitted",
      modality: "document",
      mime_type: "application/pdf",
      size_bytes: 7,
      filename: "q3.pdf",
      event_id: bytes.completedId,
    });
    const linked = { type: "image", imageUrl: "https://charts.example/q3.png" };
    const atUrl = await toolSpan(linked);
    expect(JSON.parse(String(atUrl.span?.attributes["gen_ai.tool.call.result"]))).toEqual(linked);
  });
});
