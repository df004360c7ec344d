import { describe, expect, it } from "vitest";
import { oneModelCall } from "./one-model-call.test.data.js";
import { lookRun, observed } from "./tool-result-run.test.data.js";

// An OpenAI Agents computer call's screenshot (agents-core types/protocol.mjs:219,
// ComputerToolOutput `{ type: "computer_screenshot", data }`, data a data URL or a URL; the
// output of a `computer_call_result` input item, protocol.mjs:501): an image in both
// projections, its bytes named, never copied. The adapter refuses computer tools, so the shapes
// are recorded here as the SDK makes them (runner/toolExecution.mjs:1512).

const png = "iVBORw0KGgo="; // the PNG signature, 8 bytes
const screenshot = { type: "computer_screenshot", data: `data:image/png;base64,${png}` };
const atUrl = { type: "computer_screenshot", data: "https://shots.example/desk.png" };

describe("toAtif a computer call's screenshot", () => {
  it("names a screenshot's bytes, and the event holding them, when the run ends at the call", async () => {
    const { store, completed } = await lookRun(screenshot);
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "[image omitted: image/png, 8 bytes]" },
    ]);
    expect(result?.extra).toEqual({
      images_omitted: [
        {
          part: 0,
          media_type: "image/png",
          size_bytes: 8,
          reason: "bytes recorded in the ledger",
          event_id: completed,
        },
      ],
    });
  });

  it("shows a screenshot at a URL as an image, and reads the one a later request gave", async () => {
    expect((await observed((await lookRun(atUrl)).store))?.content).toEqual([
      {
        type: "image",
        source: { media_type: "image/png", path: "https://shots.example/desk.png" },
      },
    ]);
    // The next request's computer_call_result item gives the model the screenshot.
    const given = { type: "computer_call_result", callId: "t1", output: screenshot };
    const { store, nextRequest } = await lookRun(atUrl, given);
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "[image omitted: image/png, 8 bytes]" },
    ]);
    expect(result?.extra).toMatchObject({ images_omitted: [{ event_id: nextRequest }] });
  });
});

describe("toOtelSpans' gen_ai.input.messages of a computer call's screenshot", () => {
  it("is the tool's answer to its call, an image blob named without its bytes", async () => {
    const { requestedEventId, input: attribute } = await oneModelCall({
      input: [
        { role: "user", content: "open the report" },
        { type: "computer_call_result", callId: "cc1", output: screenshot },
      ],
    });
    expect(attribute).not.toContain(png);
    expect(JSON.parse(attribute)).toEqual([
      { role: "user", parts: [{ type: "text", content: "open the report" }] },
      {
        role: "tool",
        parts: [
          {
            type: "tool_call_response",
            id: "cc1",
            response: [
              {
                type: "agent_ledger.blob_omitted",
                modality: "image",
                mime_type: "image/png",
                size_bytes: 8,
                event_id: requestedEventId,
              },
            ],
          },
        ],
      },
    ]);
  });
});
