import { toPlainJson } from "@agent-ledger/core";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import {
  decodeGenerateResult,
  encodeModelResponse,
  recordedStreamParts,
} from "./model-response.js";
import { StreamAssembler } from "./stream-assembler.js";
import { usage } from "./testing/scripted-model.test.data.js";

const rich: LanguageModelV3GenerateResult = {
  content: [
    {
      type: "reasoning",
      text: "think first",
      providerMetadata: { anthropic: { signature: "sig" } },
    },
    { type: "text", text: "Here is a chart." },
    { type: "file", mediaType: "image/png", data: new Uint8Array([137, 80, 78, 71]) },
    {
      type: "source",
      sourceType: "url",
      id: "src-1",
      url: "https://example.com",
      title: "Example",
    },
    { type: "tool-call", toolCallId: "c1", toolName: "plot", input: '{"x":[1,2]}' },
  ],
  finishReason: { unified: "tool-calls", raw: "tool_use" },
  usage: usage(12, 7),
  warnings: [{ type: "other", message: "seed ignored" }],
  providerMetadata: { openai: { cached: 0 } },
  response: { id: "resp-9", modelId: "m-1", timestamp: new Date("2025-01-02T03:04:05.000Z") },
  request: { body: { huge: "not recorded" } },
};

describe("recorded model responses", () => {
  it("encode to plain JSON (bytes base64, Date ISO) and decode to an equivalent result", () => {
    const encoded = encodeModelResponse(rich);
    expect(() => toPlainJson(encoded)).not.toThrow();
    expect(encoded.response).toEqual({
      id: "resp-9",
      modelId: "m-1",
      timestamp: "2025-01-02T03:04:05.000Z",
    });
    expect(JSON.stringify(encoded)).not.toContain("not recorded");
    const decoded = decodeGenerateResult(toPlainJson(encoded));
    expect(decoded.response?.timestamp).toEqual(rich.response?.timestamp);
    expect(decoded.content[2]).toEqual({ type: "file", mediaType: "image/png", data: "iVBORw==" });
    expect(decoded.content.filter((part) => part.type !== "file")).toEqual(
      rich.content.filter((part) => part.type !== "file"),
    );
    expect(decoded.finishReason).toEqual(rich.finishReason);
    expect(decoded.usage.inputTokens.total).toBe(12);
    expect(decoded.warnings).toEqual(rich.warnings);
    expect(decoded.providerMetadata).toEqual(rich.providerMetadata);
  });

  it("re-emitted stream parts assemble back into the same recorded content", () => {
    const encoded = toPlainJson(encodeModelResponse(rich));
    const parts = recordedStreamParts(encoded);
    expect(parts[0]?.type).toBe("stream-start");
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: rich.finishReason });
    const assembler = new StreamAssembler();
    for (const part of parts) assembler.add(part);
    expect(toPlainJson(encodeModelResponse(assembler.result()))).toEqual(encoded);
  });
});
