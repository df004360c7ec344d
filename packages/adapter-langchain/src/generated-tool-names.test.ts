import type { JsonObject } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { withStableToolNames } from "./generated-tool-names.js";
import type { StructuredOutputNote } from "./structured-output-note.js";

/** A request as the handler builds it, its params binding `tools` OpenAI's way. */
function requestBinding(tools: string[], messages: JsonObject[] = []): JsonObject {
  return {
    model: "gpt-test",
    messages,
    params: {
      tools: tools.map((name) => ({ type: "function", function: { name, parameters: {} } })),
      tool_choice: "any",
    },
  };
}

describe("withStableToolNames: the tool names createAgent generated, as placeholders", () => {
  it("a bare schema's extract-<n> becomes extract-<n> in the params, the name sent is kept apart", () => {
    const earlier = { type: "ai", tool_calls: [{ id: "c1", name: "extract-1", args: {} }] };
    const stable = withStableToolNames(requestBinding(["get_weather", "extract-7"], [earlier]), {
      tools: [],
      generated: true,
      agentTools: ["get_weather"],
    });
    expect(stable.generated).toEqual(["extract-7"]);
    // The messages hold an earlier turn's name, from the state: the same in every process.
    expect(stable.request).toEqual(requestBinding(["get_weather", "extract-<n>"], [earlier]));
    // The same call in another process, named otherwise: the same request.
    const elsewhere = withStableToolNames(requestBinding(["get_weather", "extract-1"], [earlier]), {
      tools: [],
      generated: true,
      agentTools: ["get_weather"],
    });
    expect(elsewhere.request).toEqual(stable.request);
  });

  it("several schemas: placeholders in the order createAgent numbered them", () => {
    const stable = withStableToolNames(requestBinding(["extract-12", "extract-9", "extract-10"]), {
      tools: [],
      generated: true,
      agentTools: [],
    });
    expect(stable.generated).toEqual(["extract-9", "extract-10", "extract-12"]);
    expect(stable.request).toEqual(
      requestBinding(["extract-<n+2>", "extract-<n>", "extract-<n+1>"]),
    );
  });

  it("toolStrategy: only its own tools' generated names", () => {
    const request = requestBinding(["extract-3", "extract-4"]);
    const stable = withStableToolNames(request, { tools: ["extract-4"] });
    expect(stable.generated).toEqual(["extract-4"]);
    expect(stable.request).toEqual(requestBinding(["extract-3", "extract-<n>"]));
  });

  it("a request without a generated name is the request itself: its hash is what it was", () => {
    const notes: [string[], StructuredOutputNote][] = [
      // A schema with a title: createAgent names its tool after it.
      [["get_weather", "Weather"], { tools: ["Weather"] }],
      [["get_weather", "Weather"], { tools: ["Weather"], generated: false, agentTools: [] }],
      // An agent's own tool that happens to look generated is the agent's.
      [["extract-7"], { tools: [], generated: true, agentTools: ["extract-7"] }],
      [["extract-7"], { tools: ["Weather"] }],
    ];
    for (const [tools, note] of notes) {
      const request = requestBinding(tools);
      const stable = withStableToolNames(request, note);
      expect(stable).toEqual({ request, generated: [] });
      expect(stable.request).toBe(request);
    }
  });
});
