import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { lookedAgain, lookRun, lookStarted, observed } from "./tool-result-run.test.data.js";

// What an ATIF observation says the model read of a call that gave no result of its own (the
// AI SDK's tool output for the model in the next request, as its providers unwrap it), and of a
// completed call's text output.

/**
 * A run whose tool call t1 ends with `end` (failed or abandoned), then a model request giving
 * the model `output` as the AI SDK's tool message answering t1.
 */
async function endedRun(end: "failed" | "abandoned", output: JsonValue) {
  const started = await lookStarted();
  if (end === "failed") await started.recorder.toolFailed(started.tool, new Error("lens cracked"));
  else await started.recorder.abandon(started.tool, "a person said no");
  await lookedAgain(started, {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "t1", toolName: "look", output }],
  });
  return started.store;
}

describe("toAtif what the model read of a call without a result", () => {
  it("reads an error given as text or JSON as the value it wraps", async () => {
    const text = await endedRun("failed", { type: "error-text", value: "lens cracked" });
    expect((await observed(text))?.content).toBe("lens cracked");
    const json = await endedRun("failed", { type: "error-json", value: { code: 7 } });
    expect((await observed(json))?.content).toBe('{"code":7}');
  });

  it("reads a `content` output as the text of its parts, not their JSON", async () => {
    const store = await endedRun("failed", {
      type: "content",
      value: [
        { type: "text", text: "lens cracked" },
        { type: "text", text: "try another" },
      ],
    });
    const result = await observed(store);
    expect(result?.content).toBe("lens cracked\ntry another");
    expect(result?.extra).toMatchObject({ status: "failed" });
  });

  it("reads a denied execution as its reason, else the words the providers send", async () => {
    const said = await endedRun("abandoned", { type: "execution-denied", reason: "not today" });
    expect(await observed(said)).toEqual({
      source_call_id: "t1",
      content: "not today",
      extra: { status: "abandoned", reason: "a person said no" },
    });
    const unsaid = await endedRun("abandoned", { type: "execution-denied" });
    expect((await observed(unsaid))?.content).toBe("Tool execution denied.");
  });
});

describe("toAtif a completed call's text output, the run ending at the tool", () => {
  it("shows an OpenAI Agents text output, or a list of text parts, as the text the model read", async () => {
    // The SDK gives the model each as input_text items (runner/toolExecution.mjs:81).
    const one = await lookRun({ type: "text", text: "up 4%" }, undefined, "openai-agents");
    expect((await observed(one.store))?.content).toBe("up 4%");
    const list = await lookRun([{ type: "text", text: "up 4%" }], undefined, "openai-agents");
    expect((await observed(list.store))?.content).toBe("up 4%");
    // Any other value is its JSON, as recorded: a list of values that are no text parts too.
    const rows = await lookRun([{ type: "row", text: "up 4%" }], undefined, "openai-agents");
    expect((await observed(rows.store))?.content).toBe('[{"type":"row","text":"up 4%"}]');
  });

  it("shows a LangChain tool's list of text parts as their text, its other values as JSON", async () => {
    // A ToolMessage's content blocks: the provider gives the model their text.
    const parts = [
      { type: "text", text: "up 4%" },
      { type: "text", text: "down 1%" },
    ];
    expect((await observed((await lookRun(parts, undefined, "langchain")).store))?.content).toBe(
      "up 4%\ndown 1%",
    );
    const one = await lookRun({ type: "text", text: "up 4%", id: 7 }, undefined, "langchain");
    expect((await observed(one.store))?.content).toBe('{"type":"text","text":"up 4%","id":7}');
  });

  it("shows any other framework's result (the AI SDK's execute return) as its JSON, whatever its shape", async () => {
    // The AI SDK records what execute returned and sends the model anything but a string as
    // JSON: a result shaped like a text output or a list of text parts is no wrapper there.
    const shaped = { type: "text", text: "ok", id: 7 };
    expect((await observed((await lookRun(shaped)).store))?.content).toBe(
      '{"type":"text","text":"ok","id":7}',
    );
    const parts = [
      { type: "text", text: "a" },
      { type: "text", text: "b" },
    ];
    expect((await observed((await lookRun(parts)).store))?.content).toBe(JSON.stringify(parts));
    const valued = { type: "text", value: "ok" };
    expect((await observed((await lookRun(valued)).store))?.content).toBe(JSON.stringify(valued));
  });
});
