import { MemoryEventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { generateText, type ImagePart, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  textResult,
} from "./testing/scripted-model.test.data.js";

const address = { sessionId: "s1", runId: "r1" };
const bytes = [0x89, 0x50, 0x4e, 0x47, 1, 2, 3];
const base64 = "iVBORwECAw==";

/** One question about an image, the image given as the caller has it. */
function askAbout(recorder: SessionRecorder, image: ImagePart["image"]) {
  const model = scriptedModel([textResult("a PNG")]);
  const result = generateText({
    model: wrapLanguageModel({ model: model.model, middleware: ledgerMiddleware({ recorder }) }),
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "what is it?" },
          { type: "image", image },
        ],
      },
    ],
  });
  return { result, model };
}

describe("an image in the prompt", () => {
  it("given as a Buffer (fs.readFile) is recorded as base64, as a Uint8Array is", async () => {
    const store = new MemoryEventStore();
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), Buffer.from(bytes));
    expect((await live.result).text).toBe("a PNG");
    const requested = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.requested",
    );
    // Not the Buffer's toJSON (`{ type: "Buffer", data: [137, 80, ...] }`, a number per byte).
    expect(payload(requested).request.prompt[0].content[1]).toMatchObject({
      type: "file",
      data: base64,
    });
  });

  it.each([
    ["a Uint8Array", () => new Uint8Array(bytes)],
    ["a base64 string", () => base64],
    ["a data URL", () => `data:image/png;base64,${base64}`],
  ])("read from a file live and given as %s on resume is the same request", async (_, again) => {
    const store = new MemoryEventStore();
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), Buffer.from(bytes));
    expect((await live.result).text).toBe("a PNG");

    const resumed = await SessionRecorder.resume({ store, actor, ...address });
    const replay = askAbout(resumed, again());
    expect((await replay.result).text).toBe("a PNG");
    expect(replay.model.calls).toBe(0);
  });
});
