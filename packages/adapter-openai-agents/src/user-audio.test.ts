import { MemoryEventStore, toAtif } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { Agent, setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { runWithLedger } from "./index.js";
import { runOptions } from "./testing/recorded-run.js";
import { message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// A user's audio given by an OpenAI file id (agents-core types/protocol.mjs:115, AudioContent:
// `audio: { id }`), as ATIF and OpenTelemetry name it: a file the provider holds, by its id.

describe("a user's audio given by a file id", () => {
  test("is named as the provider's file, its media type by its format, in both projections", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("a dog barking")]]);
    const agent = new Agent({ name: "listener", instructions: "describe sounds" });
    const input = [
      {
        role: "user" as const,
        content: [
          { type: "input_text" as const, text: "what is this?" },
          { type: "audio" as const, audio: { id: "file-bark1" }, format: "wav" },
        ],
      },
    ];
    await runWithLedger(agent, input, runOptions(store, model));
    // The SDK gave the model the audio as it was given: by its id.
    expect(model.requests[0]?.input).toEqual([
      expect.objectContaining({
        content: expect.arrayContaining([expect.objectContaining({ audio: { id: "file-bark1" } })]),
      }),
    ]);

    const chat = (await exportedSpans(store, "s", { includeMessages: true })).find(
      (span) => span.attributes["gen_ai.operation.name"] === "chat",
    );
    expect(JSON.parse(String(chat?.attributes["gen_ai.input.messages"]))).toEqual([
      {
        role: "user",
        parts: [
          { type: "text", content: "what is this?" },
          { type: "file", modality: "audio", mime_type: "audio/wav", file_id: "file-bark1" },
        ],
      },
    ]);

    const user = (await toAtif(store, "s")).steps.find((step) => step.source === "user");
    expect(user?.message).toEqual([
      { type: "text", text: "what is this?" },
      { type: "text", text: "[file omitted: provider file id file-bark1, audio/wav]" },
    ]);
    expect(user?.extra).toEqual({
      files_omitted: [
        expect.objectContaining({ part: 1, media_type: "audio/wav", file_id: "file-bark1" }),
      ],
    });
  });
});
