import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { oneModelCall } from "./one-model-call.test.data.js";
import { toAtif } from "./to-atif.js";

// A user's audio, as each framework records it, in ATIF's user step and in the chat span's
// gen_ai.input.messages: named with its media type and size, never its bytes.

const wav = "UklGRiQAAABXQVZF"; // "RIFF$\0\0\0WAVE", 12 bytes

/** One model call whose request's user message says "listen" then gives `audio`. */
async function heard(audio: JsonValue) {
  const content = [{ type: "text", text: "listen" }, audio];
  const { store, requestedEventId, input } = await oneModelCall({
    model: "m",
    messages: [{ role: "user", content }],
  });
  const user = (await toAtif(store, "s")).steps.find((step) => step.source === "user");
  return { input, user, eventId: requestedEventId };
}

/** What both projections should say of 12 bytes of audio of `mediaType`, in event `eventId`. */
function expectNamed(
  { input, user, eventId }: Awaited<ReturnType<typeof heard>>,
  mediaType: string | null,
) {
  expect(input).not.toContain(wav);
  expect(JSON.parse(input)).toEqual([
    {
      role: "user",
      parts: [
        { type: "text", content: "listen" },
        {
          type: "agent_ledger.blob_omitted",
          modality: "audio",
          ...(mediaType === null ? {} : { mime_type: mediaType }),
          size_bytes: 12,
          event_id: eventId,
        },
      ],
    },
  ]);
  expect(user?.message).toEqual([
    { type: "text", text: "listen" },
    { type: "text", text: `[file omitted: ${mediaType ?? "media type unknown"}, 12 bytes]` },
  ]);
  expect(user?.extra).toEqual({
    files_omitted: [
      {
        part: 1,
        media_type: mediaType,
        size_bytes: 12,
        reason: "bytes recorded in the ledger",
        event_id: eventId,
      },
    ],
  });
}

describe("a user's audio in ATIF and OpenTelemetry", () => {
  it("names OpenAI Chat Completions' input_audio, its media type audio/<format>", async () => {
    // A LangChain message may carry it as it is (LangChain's own translator reads it so).
    expectNamed(
      await heard({ type: "input_audio", input_audio: { data: wav, format: "wav" } }),
      "audio/wav",
    );
  });

  it("names OpenAI Agents' audio input content, with or without its format", async () => {
    expectNamed(await heard({ type: "audio", audio: wav, format: "mp3" }), "audio/mp3");
    expectNamed(await heard({ type: "audio", audio: wav }), null);
  });

  it("still names MCP's audio (data, mimeType)", async () => {
    expectNamed(await heard({ type: "audio", data: wav, mimeType: "audio/ogg" }), "audio/ogg");
  });
});
