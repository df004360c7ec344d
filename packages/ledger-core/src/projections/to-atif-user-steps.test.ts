import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";

const actor = { type: "agent", id: "a" } as const;

/** Records one model call per request (each answered "reply to <its last message>"). */
async function recordRequests(messagesOfEachCall: JsonValue[][]): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  for (const messages of messagesOfEachCall) {
    const call = await recorder.beforeModelCall({ request: { model: "m", messages } });
    const last = messages[messages.length - 1] as { content: string };
    await recorder.modelCompleted(call, { text: `reply to ${last.content}` });
  }
  return store;
}

const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

/** The conversation of turns 1..count: each user message, then the reply to it. */
function conversation(from: number, count: number): JsonValue[] {
  const messages: JsonValue[] = [];
  for (let turn = from; turn <= count; turn++) {
    messages.push(user(`q${turn}`));
    if (turn < count) messages.push(assistant(`reply to q${turn}`));
  }
  return messages;
}

const sourcesAndMessages = async (store: MemoryEventStore) =>
  (await toAtif(store, "s")).steps.map((step) => [step.source, step.message]);

describe("toAtif user steps read from model requests", () => {
  it("has the prompt of each of two independent calls (each a fresh history)", async () => {
    const store = await recordRequests([[user("Translate cat.")], [user("Translate dog.")]]);
    expect(await sourcesAndMessages(store)).toEqual([
      ["user", "Translate cat."],
      ["agent", "reply to Translate cat."],
      ["user", "Translate dog."],
      ["agent", "reply to Translate dog."],
    ]);
  });

  it("has each user message once when a side call with its own prompt runs between two turns", async () => {
    // A classifier between the main loop's turns: its prompt is a conversation of its own, and
    // the main loop's next request re-sends the first question, which is not said again.
    const store = await recordRequests([
      [user("book a flight")],
      [user("classify: Paris")],
      [user("book a flight"), assistant("reply to book a flight"), user("Paris")],
    ]);
    expect((await sourcesAndMessages(store)).filter(([source]) => source === "user")).toEqual([
      ["user", "book a flight"],
      ["user", "classify: Paris"],
      ["user", "Paris"],
    ]);
  });

  it("has each user message once in a conversation that grows turn by turn", async () => {
    const requests = [1, 2, 3, 4, 5].map((turns) => conversation(1, turns));
    const steps = await sourcesAndMessages(await recordRequests(requests));
    expect(steps).toEqual(
      [1, 2, 3, 4, 5].flatMap((turn) => [
        ["user", `q${turn}`],
        ["agent", `reply to q${turn}`],
      ]),
    );
  });

  it("has the new user message of a trimmed history (its oldest turns dropped)", async () => {
    // A window of the last two turns once the conversation is three turns long.
    const requests = [
      conversation(1, 1),
      conversation(1, 2),
      conversation(2, 3),
      conversation(3, 4),
    ];
    const steps = await sourcesAndMessages(await recordRequests(requests));
    expect(steps).toEqual(
      [1, 2, 3, 4].flatMap((turn) => [
        ["user", `q${turn}`],
        ["agent", `reply to q${turn}`],
      ]),
    );
  });

  it("has the prompt of a fresh history that repeats the previous request's last message", async () => {
    const store = await recordRequests([conversation(1, 2), [user("q2")]]);
    expect(await sourcesAndMessages(store)).toEqual([
      ["user", "q1"],
      ["user", "q2"],
      ["agent", "reply to q2"],
      ["user", "q2"],
      ["agent", "reply to q2"],
    ]);
  });
});

describe("toAtif a user's images", () => {
  const png = "iVBORwECAw=="; // 7 bytes
  const photo = "https://photos.example/cat.png";

  it("keeps an image at a URL as an ATIF image part, and names one recorded as bytes where to find it", async () => {
    // As the AI SDK records its prompt (LanguageModelV3: `file` parts with a media type).
    const store = await recordRequests([
      [
        {
          role: "user",
          content: [
            { type: "text", text: "what are these?" },
            { type: "file", mediaType: "image/png", data: photo },
            { type: "file", mediaType: "image/png", data: png },
          ],
        },
      ],
    ]);
    const trajectory = await toAtif(store, "s");
    const step = trajectory.steps[0];
    expect(step?.message).toEqual([
      { type: "text", text: "what are these?" },
      { type: "image", source: { media_type: "image/png", path: photo } },
      { type: "text", text: "[image omitted: image/png, 7 bytes]" },
    ]);
    const requested = (await store.readRun({ sessionId: "s", runId: "r" })).events.find(
      (event) => event.type === "model.requested",
    );
    expect(step?.extra).toEqual({
      images_omitted: [
        {
          part: 2,
          media_type: "image/png",
          size_bytes: 7,
          reason: "bytes recorded in the ledger",
          event_id: requested?.eventId,
        },
      ],
    });
  });

  it("reads the images of LangChain's image_url, OpenAI Agents' input_image and Anthropic's image parts", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    // OpenAI Agents records its run's input: Responses API items.
    await recorder.recordInput([
      {
        role: "user",
        content: [
          { type: "input_text", text: "compare" },
          { type: "input_image", image_url: `data:image/jpeg;base64,${png}`, detail: "auto" },
          { type: "input_image", image_url: "https://photos.example/dog.JPG?size=large" },
        ],
      },
    ]);
    // LangChain's and Anthropic's message parts, in a model request.
    const messages: JsonValue[] = [
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://photos.example/a.webp" } },
          { type: "image", source: { type: "base64", media_type: "image/gif", data: png } },
          { type: "image_url", image_url: "https://photos.example/render" },
        ],
      },
    ];
    const call = await recorder.beforeModelCall({ request: { model: "m", messages } });
    await recorder.modelCompleted(call, { text: "ok" });
    const steps = (await toAtif(store, "s")).steps;
    expect(steps[0]?.message).toEqual([
      { type: "text", text: "compare" },
      { type: "text", text: "[image omitted: image/jpeg, 7 bytes]" },
      {
        type: "image",
        source: { media_type: "image/jpeg", path: "https://photos.example/dog.JPG?size=large" },
      },
    ]);
    // Recorded as the run's input, the model request's messages are no user steps of their own.
    expect(steps.map((step) => step.source)).toEqual(["user", "agent"]);

    // Without a recorded input, the request's user message is the user step.
    const [user] = (await toAtif(await recordRequests([messages]), "s")).steps;
    expect(user?.message).toEqual([
      {
        type: "image",
        source: { media_type: "image/webp", path: "https://photos.example/a.webp" },
      },
      { type: "text", text: "[image omitted: image/gif, 7 bytes]" },
      // No media type recorded nor in its name: ATIF's image parts need one.
      { type: "text", text: "[image omitted: https://photos.example/render, media type unknown]" },
    ]);
    expect(user?.extra?.images_omitted).toMatchObject([
      { part: 1, media_type: "image/gif", size_bytes: 7 },
      { part: 2, media_type: null, url: "https://photos.example/render" },
    ]);
  });

  it("names a file a part gives by a provider's file id (Anthropic's, OpenAI Responses') as that id, never as an image it holds", async () => {
    // Shown as a 0-byte image "recorded in the ledger" at first, then dropped: the model was
    // given the files, and the ledger holds their ids, not their bytes.
    const messages: JsonValue[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "what is in the files?" },
          // Anthropic's Files API blocks, as LangChain's ChatAnthropic passes them through.
          { type: "image", source: { type: "file", file_id: "file_011" } },
          { type: "document", source: { type: "file", file_id: "file_012" } },
          // The Responses API's, as LangChain's ChatOpenAI (useResponsesApi) passes them through.
          { type: "input_image", file_id: "file-img1", detail: "auto" },
          { type: "input_file", file_id: "file-pdf1" },
        ],
      },
    ];
    const store = await recordRequests([messages]);
    const [user] = (await toAtif(store, "s")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "what is in the files?" },
      { type: "text", text: "[image omitted: provider file id file_011, media type unknown]" },
      { type: "text", text: "[file omitted: provider file id file_012, media type unknown]" },
      { type: "text", text: "[image omitted: provider file id file-img1, media type unknown]" },
      { type: "text", text: "[file omitted: provider file id file-pdf1, media type unknown]" },
    ]);
    const requested = (await store.readRun({ sessionId: "s", runId: "r" })).events.find(
      (event) => event.type === "model.requested",
    );
    const named = (part: number, fileId: string) => ({
      part,
      media_type: null,
      file_id: fileId,
      reason: "held by the provider, named by its file id: no bytes in the ledger",
      event_id: requested?.eventId,
    });
    expect(user?.extra).toEqual({
      images_omitted: [named(1, "file_011"), named(3, "file-img1")],
      files_omitted: [named(2, "file_012"), named(4, "file-pdf1")],
    });
  });

  it("names the files OpenAI Chat Completions' file parts give, and shows a document given as text as its text", async () => {
    // Each was dropped, only the message's text shown (or a file id shown instead of its URL).
    const pdf = "JVBERi0xLjc="; // "%PDF-1.7", 8 bytes
    const messages: JsonValue[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "compare" },
          // OpenAI Chat Completions' (LangChain's ChatOpenAI passes them through).
          { type: "file", file: { file_id: "file-cc1" } },
          {
            type: "file",
            file: { file_data: `data:application/pdf;base64,${pdf}`, filename: "b.pdf" },
          },
          // Anthropic's documents given as text: plain text, or content blocks.
          { type: "document", source: { type: "text", media_type: "text/plain", data: "terms" } },
          {
            type: "document",
            source: { type: "content", content: [{ type: "text", text: "page" }] },
          },
          // The Responses API's, at a URL and with its id beside: the URL is what it holds.
          { type: "input_file", file_url: "https://files.example/c.pdf", file_id: "file-c" },
        ],
      },
    ];
    const store = await recordRequests([messages]);
    const [user] = (await toAtif(store, "s")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "compare" },
      { type: "text", text: "[file omitted: provider file id file-cc1, media type unknown]" },
      { type: "text", text: "[file omitted: b.pdf, application/pdf, 8 bytes]" },
      { type: "text", text: "terms" },
      { type: "text", text: "page" },
      { type: "text", text: "[file omitted: https://files.example/c.pdf, media type unknown]" },
    ]);
    const requested = (await store.readRun({ sessionId: "s", runId: "r" })).events.find(
      (event) => event.type === "model.requested",
    );
    expect(user?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: null,
          file_id: "file-cc1",
          reason: "held by the provider, named by its file id: no bytes in the ledger",
          event_id: requested?.eventId,
        },
        {
          part: 2,
          media_type: "application/pdf",
          filename: "b.pdf",
          size_bytes: 8,
          reason: "bytes recorded in the ledger",
          event_id: requested?.eventId,
        },
        {
          part: 5,
          media_type: null,
          url: "https://files.example/c.pdf",
          reason: "ATIF content parts are text and images only",
          event_id: requested?.eventId,
        },
      ],
    });
  });

  it("names a file the Responses API's input_file holds as a data URL (file_data) or at file_url", async () => {
    // As LangChain's ChatOpenAI (useResponsesApi) passes them through.
    const pdf = "JVBERi0xLjc="; // "%PDF-1.7", 8 bytes
    const messages: JsonValue[] = [
      {
        role: "user",
        content: [
          {
            type: "input_file",
            file_data: `data:application/pdf;base64,${pdf}`,
            filename: "a.pdf",
          },
          { type: "input_file", file_url: "https://files.example/b.pdf" },
        ],
      },
    ];
    const [user] = (await toAtif(await recordRequests([messages]), "s")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "[file omitted: a.pdf, application/pdf, 8 bytes]" },
      { type: "text", text: "[file omitted: https://files.example/b.pdf, media type unknown]" },
    ]);
    expect(user?.extra?.files_omitted).toMatchObject([
      { part: 0, media_type: "application/pdf", filename: "a.pdf", size_bytes: 8 },
      { part: 1, media_type: null, url: "https://files.example/b.pdf" },
    ]);
  });

  it("shows as an image a file part whose media type, recorded or its data URL's, is an image's", async () => {
    // Each was dropped whole: not an image by its part's type, nor a file by its media type.
    const png = "iVBORwECAw=="; // 7 bytes
    const messages: JsonValue[] = [
      {
        role: "user",
        content: [
          { type: "input_file", file_data: `data:image/png;base64,${png}`, filename: "a.png" },
          { type: "file", file: { file_data: `data:image/jpeg;base64,${png}`, filename: "b.jpg" } },
          { type: "input_file", file: `data:image/gif;base64,${png}` },
          // LangChain's standard file block of an image type, at a URL: an ATIF image part.
          { type: "file", url: "https://photos.example/cat.webp", mimeType: "image/webp" },
        ],
      },
    ];
    const [user] = (await toAtif(await recordRequests([messages]), "s")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "[image omitted: a.png, image/png, 7 bytes]" },
      { type: "text", text: "[image omitted: b.jpg, image/jpeg, 7 bytes]" },
      { type: "text", text: "[image omitted: image/gif, 7 bytes]" },
      {
        type: "image",
        source: { media_type: "image/webp", path: "https://photos.example/cat.webp" },
      },
    ]);
    expect(user?.extra?.images_omitted).toMatchObject([
      { part: 0, media_type: "image/png", filename: "a.png", size_bytes: 7 },
      { part: 1, media_type: "image/jpeg", filename: "b.jpg", size_bytes: 7 },
      { part: 2, media_type: "image/gif", size_bytes: 7 },
    ]);
    expect(user?.extra?.files_omitted).toBeUndefined();
  });
});
