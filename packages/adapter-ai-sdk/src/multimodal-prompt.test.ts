import { join } from "node:path";
import {
  inspectSession,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
  toAtif,
  verifyRun,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, type ImagePart, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import { streamingModel } from "./testing/failing-stream.test.data.js";
import { PHOTO_RUN, photoSteps, runPhotoAgent } from "./testing/photo-agent.test.data.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  textResult,
} from "./testing/scripted-model.test.data.js";

const address = { sessionId: "s1", runId: "r1" };
const bytes = [0x89, 0x50, 0x4e, 0x47, 1, 2, 3];
const base64 = "iVBORwECAw==";

/**
 * One question about an image, the image given as the caller has it; `download` is the SDK's
 * (`experimental_download`) for a URL the model does not take.
 */
function askAbout(
  recorder: SessionRecorder,
  image: ImagePart["image"],
  download?: (url: URL) => Uint8Array,
) {
  const model = scriptedModel([textResult("a PNG")]);
  const result = generateText({
    model: wrapLanguageModel({ model: model.model, middleware: ledgerMiddleware({ recorder }) }),
    ...(download && {
      experimental_download: async (requests: { url: URL }[]) =>
        requests.map(({ url }) => ({ data: download(url), mediaType: "image/png" })),
    }),
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

  it("is named in the ATIF trajectory's user step, with its media type and size, not dropped", async () => {
    const store = new MemoryEventStore();
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), Buffer.from(bytes));
    expect((await live.result).text).toBe("a PNG");
    const [user] = (await toAtif(store, address.sessionId)).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "what is it?" },
      { type: "text", text: "[image omitted: image/png, 7 bytes]" },
    ]);
    expect(user?.extra?.images_omitted).toMatchObject([{ media_type: "image/png", size_bytes: 7 }]);
  });

  it("given as a provider's file id (a string the SDK finds no image in) is named as that id, not as bytes the ledger holds", async () => {
    // OpenAI's provider sends a `file-...` string as a file id: the SDK records the string as
    // given, with the media type "image/*" (no image signature found). It was once named as
    // 20 bytes recorded in the ledger, then as "base64 bytes or a provider's file id".
    const fileId = "file-6F2kJx9QpYdVbL3mTn8Rw1";
    const store = new MemoryEventStore();
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), fileId);
    expect((await live.result).text).toBe("a PNG");
    const requested = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.requested",
    );
    expect(payload(requested).request.prompt[0].content[1]).toMatchObject({
      type: "file",
      mediaType: "image/*",
      data: fileId,
    });
    const [user] = (await toAtif(store, address.sessionId)).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "what is it?" },
      { type: "text", text: `[image omitted: provider file id ${fileId}, image/*]` },
    ]);
    expect(user?.extra?.images_omitted).toEqual([
      {
        part: 1,
        media_type: "image/*",
        file_id: fileId,
        reason: "held by the provider, named by its file id: no bytes in the ledger",
        event_id: requested?.eventId,
      },
    ]);
  });

  it("given as bytes the SDK finds no signature in (an SVG) is named with its size, as bytes the ledger holds", async () => {
    // The SDK types it "image/*", as it does a string it finds no image in: the bytes, recorded
    // as base64, are no file id and keep their size.
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>');
    const store = new MemoryEventStore();
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), svg);
    expect((await live.result).text).toBe("a PNG");
    const requested = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.requested",
    );
    expect(payload(requested).request.prompt[0].content[1]).toMatchObject({
      type: "file",
      mediaType: "image/*",
      data: Buffer.from(svg).toString("base64"),
    });
    const [user] = (await toAtif(store, address.sessionId)).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "what is it?" },
      { type: "text", text: `[image omitted: image/*, ${svg.length} bytes]` },
    ]);
    expect(user?.extra?.images_omitted).toEqual([
      {
        part: 1,
        media_type: "image/*",
        size_bytes: svg.length,
        reason: "bytes recorded in the ledger",
        event_id: requested?.eventId,
      },
    ]);
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

describe("an image URL the model does not take", () => {
  it("is downloaded again by the SDK on resume, before the call: other bytes stop the resume", async () => {
    const store = new MemoryEventStore();
    const photo = new URL("https://photos.example/cat.png");
    const downloads: string[] = [];
    const served = (bytes: number[]) => (url: URL) => {
      downloads.push(url.href);
      return new Uint8Array(bytes);
    };
    const live = askAbout(new SessionRecorder({ store, actor, ...address }), photo, served(bytes));
    expect((await live.result).text).toBe("a PNG");
    const requested = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.requested",
    );
    expect(payload(requested).request.prompt[0].content[1].data).toBe(base64);

    // The same bytes: answered from the ledger, but downloaded again.
    const same = askAbout(
      await SessionRecorder.resume({ store, actor, ...address }),
      photo,
      served(bytes),
    );
    expect((await same.result).text).toBe("a PNG");
    expect([same.model.calls, downloads.length]).toEqual([0, 2]);

    // The image at the URL changed since: the recorded request is not the one built now.
    const changed = askAbout(
      await SessionRecorder.resume({ store, actor, ...address }),
      photo,
      served([1, 2, 3]),
    );
    await expect(changed.result).rejects.toMatchObject({ code: "replay-divergence" });
    expect(changed.model.calls).toBe(0);
  });
});

describe("a PDF in the prompt", () => {
  it("given by an OpenAI file id (the SDK's documented way) is named as that id, not as bytes the ledger holds", async () => {
    // Recorded as the string given: it was named "20 bytes", "recorded in the ledger".
    const fileId = "file-8EFBcWHsQxZV7YGezBC1fq";
    const store = new MemoryEventStore();
    const model = scriptedModel([textResult("a contract")]);
    const result = await generateText({
      model: wrapLanguageModel({
        model: model.model,
        middleware: ledgerMiddleware({
          recorder: new SessionRecorder({ store, actor, ...address }),
        }),
      }),
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is it?" },
            { type: "file", data: fileId, mediaType: "application/pdf" },
          ],
        },
      ],
    });
    expect(result.text).toBe("a contract");
    const requested = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.requested",
    );
    expect(payload(requested).request.prompt[0].content[1]).toMatchObject({
      type: "file",
      mediaType: "application/pdf",
      data: fileId,
    });
    const [user] = (await toAtif(store, address.sessionId)).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "what is it?" },
      { type: "text", text: `[file omitted: provider file id ${fileId}, application/pdf]` },
    ]);
    expect(user?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: "application/pdf",
          file_id: fileId,
          reason: "held by the provider, named by its file id: no bytes in the ledger",
          event_id: requested?.eventId,
        },
      ],
    });
  });
});

const scratch = scratchDirectory("ai-sdk-multimodal-", { beforeAll, afterAll });

describe("a photo read from disk (Buffers in the prompt and in a tool's output)", () => {
  it("SIGKILLed mid-stream after the print: the resume prints nothing again and replays the same requests", async () => {
    const path = join(scratch, "photo.db");
    const crashed = await crashInChild("photo printed, mid-stream in the next step", path);
    expect(crashed).toEqual({ effects: ["printed 1"], modelCalls: 1 });
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());

    const effects: string[] = [];
    const model = streamingModel(photoSteps().slice(1));
    const resumed = await SessionRecorder.resume({ store, ...PHOTO_RUN, actor });
    expect(await runPhotoAgent(resumed, model.model, effects)).toBe(
      "printed one copy of your photo",
    );
    await resumed.completeRun({ printed: 1 });
    // Step 1 and the print are answered from the ledger; only step 2, in flight, is made again.
    expect(effects).toEqual([]);
    expect(model.calls).toBe(1);
    const events = await readWholeRun(store, PHOTO_RUN);
    const requests = events.filter((event) => event.type === "model.requested");
    // Step 2's request, made again, is the one the crashed process recorded (a retry of it).
    expect(requests).toHaveLength(3);
    expect(requests[2]?.retryOf).toBe(requests[1]?.attemptId);
    expect(payload(requests[2])).toEqual(payload(requests[1]));
    expect(JSON.stringify(payload(requests[2]))).not.toContain('"Buffer"');
    expect((await verifyRun(store, PHOTO_RUN)).ok).toBe(true);
    const view = await inspectSession(store, PHOTO_RUN.sessionId);
    expect(view.unresolved).toEqual([]);
    expect(view.runs.map((run) => run.status)).toEqual(["completed"]);
  });
});
