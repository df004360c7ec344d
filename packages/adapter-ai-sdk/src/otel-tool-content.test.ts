import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
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

describe("OpenTelemetry spans of a tool that returns MCP content with an image", () => {
  it("name the image's bytes in the tool span's result and in the next call's messages, keeping the rest", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "chart", { quarter: "q3" })),
      textResult("sales rose"),
    ]);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString("base64");
    // An MCP tool's result, as the AI SDK's MCP client gives it (no toModelOutput: the SDK
    // sends the model its JSON).
    const mcpResult = {
      content: [
        { type: "text", text: "the q3 chart" },
        { type: "image", data: png, mimeType: "image/png" },
      ],
      isError: false,
    };
    const tools = wrapTools(
      {
        chart: tool({
          inputSchema: z.object({ quarter: z.string() }),
          execute: async () => mcpResult,
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "show the q3 chart",
      tools,
      stopWhen: stepCountIs(2),
    });

    const spans = await exportedSpans(store, "s", {
      includeToolContent: true,
      includeMessages: true,
    });
    const events = (await store.readRun({ sessionId: "s", runId: "r" })).events;
    const completed = events.find((event) => event.type === "tool.completed");
    const [, next] = events.filter((event) => event.type === "model.requested");
    const named = (eventId: string | undefined) => ({
      content: [
        { type: "text", text: "the q3 chart" },
        {
          type: "agent_ledger.blob_omitted",
          modality: "image",
          mime_type: "image/png",
          size_bytes: 7,
          event_id: eventId,
        },
      ],
      isError: false,
    });
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toContain(png);

    const toolSpan = spans.find(
      (span) => span.attributes["gen_ai.operation.name"] === "execute_tool",
    );
    expect(JSON.parse(String(toolSpan?.attributes["gen_ai.tool.call.result"]))).toEqual(
      named(completed?.eventId),
    );
    const chats = spans
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const [, , toolTurn] = JSON.parse(String(chats[1]?.attributes["gen_ai.input.messages"]));
    expect(toolTurn).toEqual({
      role: "tool",
      parts: [{ type: "tool_call_response", id: "call-1", response: named(next?.eventId) }],
    });
  });
});
