import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { lookRun, observed } from "./tool-result-run.test.data.js";

const pdf = "JVBERi0xLjc="; // "%PDF-1.7", 8 bytes
const notes = {
  type: "resource",
  resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" },
};
const slip = {
  type: "resource",
  resource: { uri: "file:///slip.pdf", mimeType: "application/pdf", blob: pdf },
};
const terms = { type: "resource_link", uri: "https://shop.example/terms.md", name: "terms.md" };

describe("toAtif an MCP tool's resources", () => {
  it("shows an MCP result's text resource as its text naming its uri, and names a blob resource and a link as files", async () => {
    // As the AI SDK's MCP client records a result, the run ending at the tool. Each was dropped.
    const { store, completed } = await lookRun({ content: [notes, slip, terms], isError: false });
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "[resource: file:///notes.md, text/markdown]\n# Notes" },
      { type: "text", text: "[file omitted: file:///slip.pdf, application/pdf, 8 bytes]" },
      { type: "text", text: "[file omitted: https://shop.example/terms.md, media type unknown]" },
    ]);
    expect(result?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: "application/pdf",
          uri: "file:///slip.pdf",
          size_bytes: 8,
          reason: "bytes recorded in the ledger",
          event_id: completed,
        },
        {
          part: 2,
          media_type: null,
          filename: "terms.md",
          url: "https://shop.example/terms.md",
          reason: "ATIF content parts are text and images only",
          event_id: completed,
        },
      ],
    });
  });

  it("reads one MCP item recorded alone, as OpenAI Agents records an MCP tool's only item", async () => {
    const single: JsonValue[] = [
      slip,
      { type: "image", data: "iVBORwECAw==", mimeType: "image/png" },
    ];
    const texts = [];
    for (const item of single) {
      const { store } = await lookRun(item);
      texts.push((await observed(store))?.content);
    }
    expect(texts).toEqual([
      [{ type: "text", text: "[file omitted: file:///slip.pdf, application/pdf, 8 bytes]" }],
      [{ type: "text", text: "[image omitted: image/png, 7 bytes]" }],
    ]);
  });

  it("names the uri LangChain's MCP adapters keep in a block's metadata", async () => {
    // @langchain/mcp-adapters gives the model a text resource as a text block, a blob as a file
    // block of its data, a link as a file block at its uri: the uri and name in `metadata`.
    const { store } = await lookRun("receipt", {
      role: "tool",
      tool_call_id: "t1",
      content: [
        { type: "text", text: "# Notes", metadata: { uri: "file:///notes.md" } },
        {
          type: "file",
          data: pdf,
          mimeType: "application/pdf",
          metadata: { uri: "file:///slip.pdf" },
        },
        {
          type: "file",
          url: "https://shop.example/terms.md",
          mimeType: "text/markdown",
          metadata: { uri: "https://shop.example/terms.md", name: "terms.md" },
        },
      ],
    });
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "# Notes" },
      { type: "text", text: "[file omitted: file:///slip.pdf, application/pdf, 8 bytes]" },
      { type: "text", text: "[file omitted: https://shop.example/terms.md, text/markdown]" },
    ]);
    expect(result?.extra?.files_omitted).toMatchObject([
      { part: 1, uri: "file:///slip.pdf", size_bytes: 8 },
      { part: 2, filename: "terms.md", url: "https://shop.example/terms.md" },
    ]);
  });

  it("keeps as text a result whose resource the AI SDK's MCP client gave the model as JSON text", async () => {
    // @ai-sdk/mcp's toModelOutput: text and images as content parts, any other item as its JSON
    // in a text part. The model read text: the result stays text, as any it read so.
    const recorded = { content: [slip] };
    const { store } = await lookRun(recorded, {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t1",
          toolName: "look",
          output: { type: "content", value: [{ type: "text", text: JSON.stringify(slip) }] },
        },
      ],
    });
    const result = await observed(store);
    expect(result?.content).toBe(JSON.stringify(recorded));
    expect(result?.extra).toBeUndefined();
  });
});
