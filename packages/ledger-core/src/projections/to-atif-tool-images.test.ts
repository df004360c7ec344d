import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";
import { actor, ask, asked, lookRun, observed } from "./tool-result-run.test.data.js";

const png = "iVBORwECAw=="; // 7 bytes

describe("toAtif a tool's images", () => {
  it("shows an MCP tool's image, recorded as its result, where no later request says what the model read", async () => {
    const { store, completed } = await lookRun({
      content: [
        { type: "text", text: "the screen" },
        { type: "image", data: png, mimeType: "image/png" },
      ],
      isError: false,
    });
    const result = await observed(store);
    expect(result).toEqual({
      source_call_id: "t1",
      content: [
        { type: "text", text: "the screen" },
        { type: "text", text: "[image omitted: image/png, 7 bytes]" },
      ],
      extra: {
        images_omitted: [
          {
            part: 1,
            media_type: "image/png",
            size_bytes: 7,
            reason: "bytes recorded in the ledger",
            event_id: completed,
          },
        ],
      },
    });
  });

  it("shows what the model read of the call: a LangChain ToolMessage's image, not the result the tool recorded", async () => {
    const { store } = await lookRun("saved the chart", {
      role: "tool",
      tool_call_id: "t1",
      content: [
        { type: "text", text: "the chart" },
        { type: "image_url", image_url: { url: "https://charts.example/q3.webp" } },
      ],
    });
    expect((await observed(store))?.content).toEqual([
      { type: "text", text: "the chart" },
      {
        type: "image",
        source: { media_type: "image/webp", path: "https://charts.example/q3.webp" },
      },
    ]);
  });

  it("reads each call's own answer where a provider reuses a call id each turn", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const chart = { type: "image_url", image_url: { url: "https://charts.example/q3.png" } };
    const messages: JsonValue[] = [ask];
    // Two turns, each asking for call "0": the model is shown a chart, then a text.
    const turns: [string, JsonValue][] = [
      ["saved the chart", [chart]],
      ["no chart for q4", "no chart for q4"],
    ];
    for (const [recorded, answer] of turns) {
      const call = await recorder.beforeModelCall({ request: { model: "m", messages } });
      await recorder.modelCompleted(call, { toolCalls: [{ id: "0", name: "look", args: {} }] });
      const tool = await recorder.beforeToolCall({ toolCallId: "0", name: "look", args: {} });
      await recorder.toolCompleted(tool, recorded);
      messages.push({ ...asked, tool_calls: [{ id: "0", name: "look" }] });
      messages.push({ role: "tool", tool_call_id: "0", content: answer });
    }
    const last = await recorder.beforeModelCall({ request: { model: "m", messages } });
    await recorder.modelCompleted(last, { text: "seen" });
    const results = (await toAtif(store, "s")).steps.flatMap(
      (step) => step.observation?.results ?? [],
    );
    expect(results.map((result) => result.content)).toEqual([
      [
        {
          type: "image",
          source: { media_type: "image/png", path: "https://charts.example/q3.png" },
        },
      ],
      "no chart for q4",
    ]);
  });

  it("names a file the model was given by a provider's file id as a file, and one given by an image's file id as an image", async () => {
    // `@ai-sdk/provider` v3: `file-id` and `image-file-id` hold an id and no media type.
    const { store, nextRequest } = await lookRun("uploaded", {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t1",
          toolName: "look",
          output: {
            type: "content",
            value: [
              { type: "file-id", fileId: "file-a" },
              { type: "image-file-id", fileId: "file-b" },
            ],
          },
        },
      ],
    });
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "[file omitted: provider file id file-a, media type unknown]" },
      { type: "text", text: "[image omitted: provider file id file-b, media type unknown]" },
    ]);
    const noted = (part: number, fileId: string) => ({
      part,
      media_type: null,
      file_id: fileId,
      reason: "held by the provider, named by its file id: no bytes in the ledger",
      event_id: nextRequest,
    });
    expect(result?.extra).toEqual({
      files_omitted: [noted(0, "file-a")],
      images_omitted: [noted(1, "file-b")],
    });
  });

  it("shows an OpenAI Agents tool output image given at the part's top level (imageUrl, fileId)", async () => {
    // The SDK still takes these (toolOutputNormalization); they were shown as their JSON.
    const url = "https://charts.example/q3.png";
    const { store } = await lookRun({ type: "image", imageUrl: url });
    expect((await observed(store))?.content).toEqual([
      { type: "image", source: { media_type: "image/png", path: url } },
    ]);
    const byId = await lookRun({ type: "image", fileId: "file-chart1" });
    expect((await observed(byId.store))?.content).toEqual([
      { type: "text", text: "[image omitted: provider file id file-chart1, media type unknown]" },
    ]);
  });

  it("keeps as text a result the model read as JSON, whatever image parts it holds", async () => {
    const images = [{ type: "image", url: "https://photos.example/cat.png" }];
    const { store } = await lookRun(images, {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t1",
          toolName: "look",
          output: { type: "json", value: images },
        },
      ],
    });
    expect((await observed(store))?.content).toBe(JSON.stringify(images));
  });

  it("keeps as text a list of results that are not content parts", async () => {
    const found: JsonValue[] = [
      { title: "cat" },
      { type: "image", url: "https://photos.example/cat.png" },
    ];
    const { store } = await lookRun(found);
    expect((await observed(store))?.content).toBe(JSON.stringify(found));
  });
});
