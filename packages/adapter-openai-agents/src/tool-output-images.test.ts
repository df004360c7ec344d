import { setTracingDisabled } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { observedToolOutput } from "./testing/observed-tool-output.js";

setTracingDisabled(true);

// The tool output image shapes the SDK still takes at the top level of the part (0.14.3,
// runner/toolOutputNormalization: `imageUrl`, `fileId`, `data` beside `type: "image"`), as ATIF
// shows a run that ends at the tool: its observation is the recorded result.

/** The observation of a run whose one tool returns `output`, the run ending at the tool. */
async function observed(output: unknown) {
  return (await observedToolOutput({ output, endsAtTool: true })).result;
}

const atUrl = {
  type: "image",
  source: { media_type: "image/png", path: "https://charts.example/q3.png" },
};

describe("ATIF of a tool's output image given at the part's top level", () => {
  it("shows an image at its imageUrl, alone or in a list", async () => {
    const image = { type: "image", imageUrl: "https://charts.example/q3.png" };
    expect((await observed(image))?.content).toEqual([atUrl]);
    expect((await observed([image]))?.content).toEqual([atUrl]);
  });

  it("names an image by its fileId, alone", async () => {
    const result = await observed({ type: "image", fileId: "file-chart1" });
    expect(result?.content).toEqual([
      { type: "text", text: "[image omitted: provider file id file-chart1, media type unknown]" },
    ]);
    expect(result?.extra).toMatchObject({
      images_omitted: [{ part: 0, media_type: null, file_id: "file-chart1" }],
    });
  });

  it("shows the image at its imageUrl, not the fileId beside it, as the SDK gives the model", async () => {
    // toolOutputNormalization takes the image string first, the id only when there is none
    // (agents-core runner/toolOutputNormalization.mjs:75-105).
    const both = { type: "image", imageUrl: "https://charts.example/q3.png", fileId: "file-old1" };
    const result = await observed(both);
    expect(result?.content).toEqual([atUrl]);
    expect(result?.extra).toBeUndefined();
  });

  it("names an image by the id in its image object, as the SDK reads it (image: { id })", async () => {
    // toolOutputNormalization.mjs:67-69 takes `image.fileId`, else `image.id`.
    const result = await observed({ type: "image", image: { id: "file-chart2" } });
    expect(result?.content).toEqual([
      { type: "text", text: "[image omitted: provider file id file-chart2, media type unknown]" },
    ]);
  });
});
