import { describe, expect, it } from "vitest";
import { lookRun, observed } from "./tool-result-run.test.data.js";

const wav = "UklGRiQAAABXQVZF"; // "RIFF$\0\0\0WAVE", 12 bytes
const audio = { type: "audio", data: wav, mimeType: "audio/wav" };

describe("toAtif an MCP tool's audio", () => {
  it("names an MCP result's audio as a file omitted, its media type and size, with the event holding it", async () => {
    // As the AI SDK's MCP client records a result, the run ending at the tool: the audio was
    // dropped, the observation had the text item only.
    const { store, completed } = await lookRun({
      content: [{ type: "text", text: "the call, recorded" }, audio],
      isError: false,
    });
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "the call, recorded" },
      { type: "text", text: "[file omitted: audio/wav, 12 bytes]" },
    ]);
    expect(result?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: "audio/wav",
          size_bytes: 12,
          reason: "bytes recorded in the ledger",
          event_id: completed,
        },
      ],
    });
  });

  it("reads one audio item recorded alone, as OpenAI Agents records an MCP tool's only item", async () => {
    // Was shown as the item's JSON, its bytes and all.
    const { store, completed } = await lookRun(audio);
    const result = await observed(store);
    expect(result?.content).toEqual([
      { type: "text", text: "[file omitted: audio/wav, 12 bytes]" },
    ]);
    expect(result?.extra?.files_omitted).toEqual([
      {
        part: 0,
        media_type: "audio/wav",
        size_bytes: 12,
        reason: "bytes recorded in the ledger",
        event_id: completed,
      },
    ]);
  });
});
