import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";

describe("toOtelSpans execute_tool spans", () => {
  it("carry the gen_ai.tool.type the call's adapter noted (metadata.toolType), else function", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "tools",
      runId: "main",
      actor: { type: "agent", id: "planner" },
    });
    await recorder.startRun();
    const effect = { kind: "read" as const, idempotent: true };
    const calls: [string, Record<string, string> | undefined][] = [
      ["docs_retriever", { toolType: "datastore" }],
      ["mcp_search", { toolType: "extension" }],
      ["weather", undefined],
      // A value the conventions do not have is not passed on.
      ["odd", { toolType: "plugin" }],
    ];
    for (const [name, metadata] of calls) {
      const call = await recorder.beforeToolCall({
        name,
        args: {},
        effect,
        ...(metadata ? { metadata } : {}),
      });
      await recorder.toolCompleted(call, "ok");
    }
    // A retry that notes none (made again after a person approved it) is the same call.
    const first = await recorder.beforeToolCall({
      name: "mcp_charge",
      args: {},
      effect,
      metadata: { toolType: "extension" },
    });
    await recorder.toolCompleted(await recorder.retry(first), "charged");
    await recorder.completeRun("done");

    const spans = await exportedSpans(store, "tools");
    const typeOf = (name: string) =>
      spans.find((span) => span.name === `execute_tool ${name}`)?.attributes["gen_ai.tool.type"];
    expect(calls.map(([name]) => typeOf(name))).toEqual([
      "datastore",
      "extension",
      "function",
      "function",
    ]);
    const charges = spans.filter((span) => span.name === "execute_tool mcp_charge");
    expect(charges.map((span) => span.attributes["gen_ai.tool.type"])).toEqual([
      "extension",
      "extension",
    ]);
  });
});
