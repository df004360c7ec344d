import { MemoryEventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { decodeToolOutput, encodeToolOutput } from "./tool-output.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "s1", runId: "r1" };
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);

describe("recorded tool outputs", () => {
  it("keep bytes as base64 in the result, and where they were in the metadata", () => {
    const output = { shot: png, pages: [{ thumb: png.subarray(4) }, "AQID"], name: "home" };
    const recorded = encodeToolOutput(output);
    expect(recorded).toEqual({
      result: { shot: "iVBORwECAw==", pages: [{ thumb: "AQID" }, "AQID"], name: "home" },
      metadata: { aiSdk: { bytes: [["shot"], ["pages", 0, "thumb"]] } },
    });
    // Bytes come back as bytes; a string that only looks like base64 stays a string.
    expect(decodeToolOutput(recorded.result, recorded.metadata)).toEqual(output);
    expect(encodeToolOutput(png)).toEqual({
      result: "iVBORwECAw==",
      metadata: { aiSdk: { bytes: [[]] } },
    });
    expect(decodeToolOutput("iVBORwECAw==", { aiSdk: { bytes: [[]] } })).toEqual(png);
  });

  it("without bytes are the plain JSON alone, and decode to it unchanged", () => {
    expect(encodeToolOutput({ at: new Date(0), n: Number.NaN })).toEqual({
      result: { at: "1970-01-01T00:00:00.000Z", n: null },
    });
    // A ledger written before bytes were marked: the base64 string, as recorded.
    expect(decodeToolOutput({ shot: "iVBORwECAw==" }, undefined)).toEqual({
      shot: "iVBORwECAw==",
    });
    // Paths that do not lead to a string inside the value are ignored.
    const result = { shot: { deep: 1 } };
    expect(
      decodeToolOutput(result, { aiSdk: { bytes: [["shot"], ["missing", 0], ["__proto__"]] } }),
    ).toEqual(result);
  });
});

/** A screenshot tool (computer use) that returns bytes and shows them to the model as an image. */
function screenshotRun(recorder: SessionRecorder) {
  const shots: number[] = [];
  const model = scriptedModel([
    toolCallsResult(toolCall("s1", "screenshot", {})),
    textResult("I see a PNG"),
  ]);
  const tools = wrapTools(
    {
      screenshot: tool({
        inputSchema: z.object({}),
        execute: async () => {
          shots.push(shots.length);
          return { png };
        },
        toModelOutput: ({ output }) => ({
          type: "content",
          value: [
            {
              type: "image-data",
              data: Buffer.from(output.png).toString("base64"),
              mediaType: "image/png",
            },
          ],
        }),
      }),
    },
    { recorder },
  );
  const result = generateText({
    model: wrapLanguageModel({ model: model.model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "look",
    tools,
    stopWhen: stepCountIs(3),
  });
  return { result, shots, model };
}

describe("a tool output holding bytes, on resume", () => {
  it("is replayed as bytes: toModelOutput builds the recorded prompt again, no replay-divergence", async () => {
    const store = new MemoryEventStore();
    const live = screenshotRun(new SessionRecorder({ store, actor, ...address }));
    expect((await live.result).text).toBe("I see a PNG");
    const completed = (await readWholeRun(store, address)).find(
      (event) => event.type === "tool.completed",
    );
    expect(payload(completed).result).toEqual({ png: "iVBORwECAw==" });

    const replay = screenshotRun(await SessionRecorder.resume({ store, actor, ...address }));
    expect((await replay.result).text).toBe("I see a PNG");
    expect(replay.model.calls).toBe(0);
    expect(replay.shots).toEqual([]);
  });
});
