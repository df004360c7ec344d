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
    // A Buffer is bytes too (not its toJSON's `{ type: "Buffer", data }`), and a Buffer again.
    // An ArrayBuffer too (not JSON.stringify's `{}`), and an ArrayBuffer again.
    const file = encodeToolOutput({ shot: Buffer.from(png), thumb: png, raw: png.slice().buffer });
    expect(file).toEqual({
      result: { shot: "iVBORwECAw==", thumb: "iVBORwECAw==", raw: "iVBORwECAw==" },
      metadata: {
        aiSdk: {
          bytes: [["shot"], ["thumb"], ["raw"]],
          buffers: [["shot"]],
          arrayBuffers: [["raw"]],
        },
      },
    });
    const decoded = decodeToolOutput(file.result, file.metadata) as Record<string, unknown>;
    expect([Buffer.isBuffer(decoded.shot), Buffer.isBuffer(decoded.thumb)]).toEqual([true, false]);
    expect(decoded.thumb).toBeInstanceOf(Uint8Array);
    expect(decoded.raw).toBeInstanceOf(ArrayBuffer);
    expect(new Uint8Array(decoded.raw as ArrayBuffer)).toEqual(png);
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

/**
 * A screenshot tool (computer use) that returns bytes and shows them to the model as an image;
 * `shot` is what the tool returns (a `Buffer` when it comes from `fs.readFile`).
 */
function screenshotRun(
  recorder: SessionRecorder,
  shot: () => Uint8Array | ArrayBuffer = () => png,
) {
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
          return { png: shot() };
        },
        toModelOutput: ({ output }) => ({
          type: "content",
          value: [
            {
              type: "image-data",
              // What a tool returning fs.readFile's Buffer writes: its own toString("base64").
              data: Buffer.isBuffer(shot())
                ? (output.png as Buffer).toString("base64")
                : Buffer.from(output.png as Uint8Array).toString("base64"),
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

  it("is replayed as a Buffer where the tool returned one (fs.readFile), recorded as base64", async () => {
    const store = new MemoryEventStore();
    const live = screenshotRun(new SessionRecorder({ store, actor, ...address }), () =>
      Buffer.from(png),
    );
    expect((await live.result).text).toBe("I see a PNG");
    const events = await readWholeRun(store, address);
    const completed = events.find((event) => event.type === "tool.completed");
    expect(payload(completed).result).toEqual({ png: "iVBORwECAw==" });
    // The next model call was shown the image as base64, not the Buffer's JSON.
    const requests = events.filter((event) => event.type === "model.requested");
    expect(JSON.stringify(payload(requests[1]))).toContain("iVBORwECAw==");

    const replay = screenshotRun(await SessionRecorder.resume({ store, actor, ...address }), () =>
      Buffer.from(png),
    );
    expect((await replay.result).text).toBe("I see a PNG");
    expect(replay.model.calls).toBe(0);
    expect(replay.shots).toEqual([]);
  });

  it("is replayed as an ArrayBuffer where the tool returned one (fetch's arrayBuffer()), recorded as base64", async () => {
    const store = new MemoryEventStore();
    const fetched = () => png.slice().buffer;
    const live = screenshotRun(new SessionRecorder({ store, actor, ...address }), fetched);
    expect((await live.result).text).toBe("I see a PNG");
    const completed = (await readWholeRun(store, address)).find(
      (event) => event.type === "tool.completed",
    );
    // Not JSON.stringify's `{}`: the bytes are in the ledger.
    expect(payload(completed).result).toEqual({ png: "iVBORwECAw==" });

    const replay = screenshotRun(
      await SessionRecorder.resume({ store, actor, ...address }),
      fetched,
    );
    expect((await replay.result).text).toBe("I see a PNG");
    expect(replay.model.calls).toBe(0);
    expect(replay.shots).toEqual([]);
  });
});
