import { toAtif } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  recordingAssistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

describe("ATIF of a tool that returns an image", () => {
  it("shows the image its toModelOutput gave the model in the call's observation, its bytes named, not copied", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel(
      [
        toolCallsResult(
          toolCall("call-1", "screenshot", { page: "home" }),
          toolCall("call-2", "photo", { name: "cat" }),
        ),
        textResult("a cat on the home page"),
      ],
      // The model takes image URLs itself: the SDK downloads none.
      { supportedUrls: { "image/*": [/^https:/] } },
    );
    const page = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const tools = wrapTools(
      {
        screenshot: tool({
          inputSchema: z.object({ page: z.string() }),
          execute: async () => ({ png: page }),
          toModelOutput: ({ output }) => ({
            type: "content",
            value: [
              { type: "text", text: "the home page" },
              { type: "image-data", data: output.png.toString("base64"), mediaType: "image/png" },
            ],
          }),
        }),
        photo: tool({
          inputSchema: z.object({ name: z.string() }),
          execute: async ({ name }) => `https://photos.example/${name}.png`,
          toModelOutput: ({ output }) => ({
            type: "content",
            value: [{ type: "image-url", url: output }],
          }),
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "what is on the home page?",
      tools,
      stopWhen: stepCountIs(2),
    });

    const trajectory = await toAtif(store, "s");
    const asked = trajectory.steps.find((step) => step.tool_calls !== undefined);
    const [screenshot, photo] = asked?.observation?.results ?? [];
    expect(screenshot?.content).toEqual([
      { type: "text", text: "the home page" },
      { type: "text", text: "[image omitted: image/png, 7 bytes]" },
    ]);
    // The request that gave the model the image holds its bytes.
    const [, next] = (await store.readRun({ sessionId: "s", runId: "r" })).events.filter(
      (event) => event.type === "model.requested",
    );
    expect(screenshot?.extra).toEqual({
      images_omitted: [
        {
          part: 1,
          media_type: "image/png",
          size_bytes: 7,
          reason: "bytes recorded in the ledger",
          event_id: next?.eventId,
        },
      ],
    });
    expect(photo?.content).toEqual([
      {
        type: "image",
        source: { media_type: "image/png", path: "https://photos.example/cat.png" },
      },
    ]);
    expect(JSON.stringify(trajectory)).not.toContain(page.toString("base64"));
  });
});

describe("ATIF of a tool that returns an image's bytes as JSON, with no toModelOutput", () => {
  it("keeps the result as its JSON, even with a media type beside the bytes, when the run ends with it", async () => {
    // The SDK gives the model such a result as JSON, not as an image, and the media type is a
    // field the tool chose to name so: an image part would show what the model never saw.
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([toolCallsResult(toolCall("call-1", "snap", {}))]);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const tools = wrapTools(
      {
        snap: tool({
          inputSchema: z.object({}),
          execute: async () => ({ mediaType: "image/png", data: png }),
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "snap the screen",
      tools,
    });

    const trajectory = await toAtif(store, "s");
    const asked = trajectory.steps.find((step) => step.tool_calls !== undefined);
    expect(asked?.observation?.results).toEqual([
      {
        source_call_id: "call-1",
        content: JSON.stringify({ mediaType: "image/png", data: png.toString("base64") }),
      },
    ]);
  });
});

describe("ATIF of a tool that gives the model a provider's file", () => {
  it("names each file its toModelOutput referred to by file id, never as an image held in the ledger", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "upload", { name: "scan" })),
      textResult("a signed contract"),
    ]);
    const tools = wrapTools(
      {
        // Uploaded to the provider's file store: the model is given the ids, not the bytes.
        upload: tool({
          inputSchema: z.object({ name: z.string() }),
          execute: async () => ({ image: "file-img1", pdf: "file-pdf1" }),
          toModelOutput: ({ output }) => ({
            type: "content",
            value: [
              { type: "text", text: "the scan" },
              { type: "image-file-id", fileId: output.image },
              { type: "file-id", fileId: { openai: output.pdf, anthropic: "file_pdf1" } },
            ],
          }),
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "what did I scan?",
      tools,
      stopWhen: stepCountIs(2),
    });

    const trajectory = await toAtif(store, "s");
    const asked = trajectory.steps.find((step) => step.tool_calls !== undefined);
    const [upload] = asked?.observation?.results ?? [];
    expect(upload?.content).toEqual([
      { type: "text", text: "the scan" },
      { type: "text", text: "[image omitted: provider file id file-img1, media type unknown]" },
      {
        type: "text",
        text: "[file omitted: provider file id openai file-pdf1, anthropic file_pdf1, media type unknown]",
      },
    ]);
    // The request that gave the model the ids names them; no bytes are anywhere.
    const [, next] = (await store.readRun({ sessionId: "s", runId: "r" })).events.filter(
      (event) => event.type === "model.requested",
    );
    const reason = "held by the provider, named by its file id: no bytes in the ledger";
    expect(upload?.extra).toEqual({
      images_omitted: [
        { part: 1, media_type: null, file_id: "file-img1", reason, event_id: next?.eventId },
      ],
      files_omitted: [
        {
          part: 2,
          media_type: null,
          file_id: { openai: "file-pdf1", anthropic: "file_pdf1" },
          reason,
          event_id: next?.eventId,
        },
      ],
    });
  });
});

describe("ATIF of files the model was shown that are not images", () => {
  it("names a PDF in the user's message and the files a tool's toModelOutput gave, as bytes or at a URL", async () => {
    const { store, recorder } = recordingAssistant();
    const { model } = scriptedModel(
      [toolCallsResult(toolCall("call-1", "fetch", { name: "terms" })), textResult("both signed")],
      // The model takes PDF URLs itself: the SDK downloads none.
      { supportedUrls: { "application/pdf": [/^https:/] } },
    );
    const contract = Buffer.from("%PDF-1.7 contract");
    const terms = Buffer.from("%PDF-1.7 terms");
    const tools = wrapTools(
      {
        fetch: tool({
          inputSchema: z.object({ name: z.string() }),
          execute: async ({ name }) => ({ pdf: terms, url: `https://files.example/${name}.pdf` }),
          toModelOutput: ({ output }) => ({
            type: "content",
            value: [
              { type: "text", text: "the terms" },
              {
                type: "file-data",
                data: output.pdf.toString("base64"),
                mediaType: "application/pdf",
                filename: "terms.pdf",
              },
              { type: "file-url", url: output.url, mediaType: "application/pdf" },
            ],
          }),
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "is the contract signed?" },
            {
              type: "file",
              mediaType: "application/pdf",
              data: contract,
              filename: "contract.pdf",
            },
          ],
        },
      ],
      tools,
      stopWhen: stepCountIs(2),
    });

    const trajectory = await toAtif(store, "s");
    const requests = (await store.readRun({ sessionId: "s", runId: "r" })).events.filter(
      (event) => event.type === "model.requested",
    );
    const [user] = trajectory.steps;
    expect(user?.message).toEqual([
      { type: "text", text: "is the contract signed?" },
      { type: "text", text: "[file omitted: contract.pdf, application/pdf, 17 bytes]" },
    ]);
    const held = "bytes recorded in the ledger";
    expect(user?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: "application/pdf",
          filename: "contract.pdf",
          size_bytes: contract.length,
          reason: held,
          event_id: requests[0]?.eventId,
        },
      ],
    });
    const asked = trajectory.steps.find((step) => step.tool_calls !== undefined);
    const [fetched] = asked?.observation?.results ?? [];
    expect(fetched?.content).toEqual([
      { type: "text", text: "the terms" },
      { type: "text", text: "[file omitted: terms.pdf, application/pdf, 14 bytes]" },
      { type: "text", text: "[file omitted: https://files.example/terms.pdf, application/pdf]" },
    ]);
    expect(fetched?.extra).toEqual({
      files_omitted: [
        {
          part: 1,
          media_type: "application/pdf",
          filename: "terms.pdf",
          size_bytes: terms.length,
          reason: held,
          event_id: requests[1]?.eventId,
        },
        {
          part: 2,
          media_type: "application/pdf",
          url: "https://files.example/terms.pdf",
          reason: "ATIF content parts are text and images only",
          event_id: requests[1]?.eventId,
        },
      ],
    });
    expect(JSON.stringify(trajectory)).not.toContain(contract.toString("base64"));
    expect(JSON.stringify(trajectory)).not.toContain(terms.toString("base64"));
  });
});
