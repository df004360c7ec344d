import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { describe, expect, it } from "vitest";
import { recordAgentRun } from "./testing/agent-run.test.data.js";

describe("OpenTelemetry chat spans with includeMessages", () => {
  it("carry a createAgent conversation with a tool call as the conventions' messages", async () => {
    const store = await recordAgentRun();

    const chats = (await exportedSpans(store, "s", { includeMessages: true }))
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const json = (index: number, attribute: string) =>
      JSON.parse(String(chats[index]?.attributes[attribute]));
    expect(chats).toHaveLength(2);

    // createAgent's system prompt is a SystemMessage of the list: it stays there.
    const system = { role: "system", parts: [{ type: "text", content: "You are terse." }] };
    const user = { role: "user", parts: [{ type: "text", content: "what is x?" }] };
    const asked = { type: "tool_call", id: "call-lookup", name: "lookup", arguments: { key: "x" } };
    expect(json(0, "gen_ai.input.messages")).toEqual([system, user]);
    expect(json(0, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [asked], finish_reason: "tool_call" },
    ]);
    // The scripted model records its bound tools by name (a provider's, with their schemas).
    expect(json(0, "gen_ai.tool.definitions")).toEqual([{ type: "function", name: "lookup" }]);
    expect(chats[0]?.attributes["gen_ai.system_instructions"]).toBeUndefined();

    expect(json(1, "gen_ai.input.messages")).toEqual([
      system,
      user,
      // createAgent names its model's messages after the node that made them.
      { role: "assistant", parts: [asked], name: "model" },
      {
        role: "tool",
        parts: [{ type: "tool_call_response", id: "call-lookup", response: "value of x" }],
      },
    ]);
    expect(json(1, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "x is 42" }], finish_reason: "stop" },
    ]);
  });
});
