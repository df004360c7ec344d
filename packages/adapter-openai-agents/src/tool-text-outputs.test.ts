import { setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { observedToolOutput } from "./testing/observed-tool-output.js";

setTracingDisabled(true);

// A tool that returns one text output ({ type: "text", text }): the SDK gives the model its
// text (runner/toolExecution.mjs:81 makes it an input_text item, which the Responses and chat
// completions models send as text), and ATIF's observation says what the model read.

describe("ATIF of a tool's one text output", () => {
  const text = { type: "text", text: "up 4% on Q2" };

  test("is its text when the run ends at the tool", async () => {
    const { result } = await observedToolOutput({ output: text, endsAtTool: true });
    expect(result?.content).toBe("up 4% on Q2");
  });

  test("is its text when the run goes on, the text the model was given", async () => {
    const { result, next } = await observedToolOutput({ output: text, endsAtTool: false });
    expect(next).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: "function_call_result",
          output: [{ type: "input_text", text: "up 4% on Q2" }],
        }),
      ]),
    );
    expect(result?.content).toBe("up 4% on Q2");
  });
});
