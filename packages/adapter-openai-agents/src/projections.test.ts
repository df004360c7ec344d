import { inspectSession, MemoryEventStore, messageHistory, toAtif } from "@agent-ledger/core";
import { Agent, setTracingDisabled } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { runWithLedger } from "./index.js";
import { fixture } from "./testing/fixture.js";
import { observedToolOutput } from "./testing/observed-tool-output.js";
import { runOptions } from "./testing/recorded-run.js";
import { message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// Core's projections read what this adapter records: the run's input as input.received.
describe("ATIF of a run started with input items", () => {
  it("has the user's new message as the user step, not an empty one", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    // A conversation continued: the earlier turn, then the new user message.
    const input = [
      { role: "user" as const, content: "hi" },
      {
        role: "assistant" as const,
        status: "completed" as const,
        content: [{ type: "output_text" as const, text: "hello" }],
      },
      { role: "user" as const, content: "sell a book" },
    ];
    const run = await runWithLedger(main, input, runOptions(store, model));
    expect(run.status).toBe("completed");
    const trajectory = await toAtif(store, "s");
    const users = trajectory.steps.filter((step) => step.source === "user");
    expect(users.map((step) => step.message)).toEqual(["sell a book"]);
  });
});

describe("ATIF of a run given files by the provider's file id", () => {
  it("names the image and the file the user's input gave by id, never as bytes the ledger holds", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("a signed contract")]]);
    const agent = new Agent({ name: "reader", instructions: "read" });
    // Uploaded to OpenAI's file store: the Responses API is given the ids (file_id).
    const input = [
      {
        role: "user" as const,
        content: [
          { type: "input_text" as const, text: "is it signed?" },
          { type: "input_image" as const, image: { id: "file-img1" } },
          { type: "input_file" as const, file: { id: "file-pdf1" }, filename: "contract.pdf" },
        ],
      },
    ];
    await runWithLedger(agent, input, runOptions(store, model));
    const [user] = (await toAtif(store, "s")).steps.filter((step) => step.source === "user");
    expect(user?.message).toEqual([
      { type: "text", text: "is it signed?" },
      { type: "text", text: "[image omitted: provider file id file-img1, media type unknown]" },
      { type: "text", text: "[file omitted: provider file id file-pdf1, media type unknown]" },
    ]);
    const reason = "held by the provider, named by its file id: no bytes in the ledger";
    expect(user?.extra).toMatchObject({
      images_omitted: [{ part: 1, media_type: null, file_id: "file-img1", reason }],
      files_omitted: [{ part: 2, media_type: null, file_id: "file-pdf1", reason }],
    });
  });
});

describe("ATIF of a run given an image and files in its input items", () => {
  it("shows the image at its URL and names the files given as a data URL or at a URL", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("a signed contract")]]);
    const agent = new Agent({ name: "reader", instructions: "read" });
    const pdf = Buffer.from("%PDF-1.7 contract").toString("base64");
    const input = [
      {
        role: "user" as const,
        content: [
          { type: "input_text" as const, text: "is it signed?" },
          { type: "input_image" as const, image: "https://photos.example/signature.png" },
          {
            type: "input_file" as const,
            file: `data:application/pdf;base64,${pdf}`,
            filename: "contract.pdf",
          },
          { type: "input_file" as const, file: { url: "https://files.example/terms.pdf" } },
        ],
      },
    ];
    await runWithLedger(agent, input, runOptions(store, model));
    const trajectory = await toAtif(store, "s");
    const [user] = trajectory.steps.filter((step) => step.source === "user");
    expect(user?.message).toEqual([
      { type: "text", text: "is it signed?" },
      {
        type: "image",
        source: { media_type: "image/png", path: "https://photos.example/signature.png" },
      },
      { type: "text", text: "[file omitted: contract.pdf, application/pdf, 17 bytes]" },
      { type: "text", text: "[file omitted: https://files.example/terms.pdf, media type unknown]" },
    ]);
    expect(user?.extra).toMatchObject({
      files_omitted: [
        { part: 2, media_type: "application/pdf", filename: "contract.pdf", size_bytes: 17 },
        { part: 3, media_type: null, url: "https://files.example/terms.pdf" },
      ],
    });
    expect(JSON.stringify(trajectory)).not.toContain(pdf);
  });
});

describe("ATIF of a run whose tool gave a file", () => {
  it("names the file of the tool's output (file: { data, mediaType, filename }), never its bytes", async () => {
    // The SDK's own tool output shape: it was dropped, the observation empty of it.
    const pdf = Buffer.from("%PDF-1.7 contract").toString("base64");
    // The run ends at the tool: its observation is the recorded result.
    const { result, trajectory } = await observedToolOutput({
      output: {
        type: "file",
        file: { data: pdf, mediaType: "application/pdf", filename: "contract.pdf" },
      },
      endsAtTool: true,
    });
    expect(result?.content).toEqual([
      { type: "text", text: "[file omitted: contract.pdf, application/pdf, 17 bytes]" },
    ]);
    expect(result?.extra).toMatchObject({
      files_omitted: [
        { part: 0, media_type: "application/pdf", filename: "contract.pdf", size_bytes: 17 },
      ],
    });
    // The run's final output (extra.result) is the tool's, as the SDK gives it: not the step's.
    expect(JSON.stringify(trajectory.steps)).not.toContain(pdf);
  });
});

describe("ATIF of a run whose tool gave an image as a file", () => {
  // The SDK's file output with an image media type: it gives the model an input_file holding a
  // data URL of that type, an image the model is shown, not a document.
  const png = "iVBORwECAw=="; // 7 bytes
  const chartFile = {
    type: "file",
    file: { data: png, mediaType: "image/png", filename: "chart.png" },
  };
  const shown = [{ type: "text", text: "[image omitted: chart.png, image/png, 7 bytes]" }];
  const noted = { part: 0, media_type: "image/png", filename: "chart.png", size_bytes: 7 };

  it("shows the image of the tool's output where the run ends at the tool", async () => {
    const { result } = await observedToolOutput({ output: chartFile, endsAtTool: true });
    expect(result?.content).toEqual(shown);
    expect(result?.extra).toEqual({ images_omitted: [expect.objectContaining(noted)] });
  });

  it("shows the image the next request gave the model (an input_file of a data URL)", async () => {
    const { result, trajectory } = await observedToolOutput({
      output: chartFile,
      endsAtTool: false,
    });
    expect(result?.content).toEqual(shown);
    expect(result?.extra).toEqual({ images_omitted: [expect.objectContaining(noted)] });
    expect(JSON.stringify(trajectory.steps)).not.toContain(png);
  });
});

describe("ATIF of a run whose tool gave an image ({ type: image, image: { ... } })", () => {
  it("shows the image the tool's output holds as data, at a URL or by a file id, where the run ends at the tool", async () => {
    // The SDK's tool output image of an object: its bytes, URL or file id were not read.
    const png = "iVBORwECAw=="; // 7 bytes
    const images = [
      { data: png, mediaType: "image/png" },
      { url: "https://charts.example/q3.png" },
      { fileId: "file-chart1" },
    ];
    const { result, trajectory } = await observedToolOutput({
      output: images.map((image) => ({ type: "image", image })),
      endsAtTool: true,
    });
    expect(result?.content).toEqual([
      { type: "text", text: "[image omitted: image/png, 7 bytes]" },
      {
        type: "image",
        source: { media_type: "image/png", path: "https://charts.example/q3.png" },
      },
      { type: "text", text: "[image omitted: provider file id file-chart1, media type unknown]" },
    ]);
    expect(result?.extra).toMatchObject({
      images_omitted: [
        { part: 0, media_type: "image/png", size_bytes: 7 },
        { part: 2, media_type: null, file_id: "file-chart1" },
      ],
    });
    expect(JSON.stringify(trajectory.steps)).not.toContain(png);
  });
});

describe("message history of an agent with a stored prompt", () => {
  it("keeps the conversation: the request's prompt object is not its message list", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("hello")]]);
    const agent = new Agent({
      name: "greeter",
      instructions: "be nice",
      prompt: { promptId: "pmpt_1", version: "2" },
    });
    await runWithLedger(agent, "hi there", runOptions(store, model));
    expect(await messageHistory(store, { sessionId: "s" })).toEqual([
      { role: "system", content: "be nice" },
      { role: "user", content: "hi there" },
      { role: "assistant", content: "hello" },
    ]);
  });
});

describe("inspection of a run with a handoff", () => {
  it("says the tokens the SDK counted: each call's, each agent's, the run's whole", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const run = await runWithLedger(main, "sell a book", runOptions(store, model));
    expect(run.status).toBe("completed");
    const inspection = await inspectSession(store, "s");
    const [seller] = inspection.runs;
    const closer = seller?.children[0];
    expect(closer?.actor?.id).toBe("closer");
    const callsOf = (view: typeof seller) =>
      view?.steps.flatMap((step) => step.attempts).filter((attempt) => attempt.kind === "model");
    // ScriptedModel reports 10 in and 5 out for every response.
    for (const call of [...(callsOf(seller) ?? []), ...(callsOf(closer) ?? [])])
      expect(call.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    const sellerCalls = callsOf(seller)?.length ?? 0;
    expect(seller?.usage).toEqual({ inputTokens: 10 * sellerCalls, outputTokens: 5 * sellerCalls });
    expect(closer?.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    // The sum is what the SDK counted for the run.
    expect(run.state?.usage.requests).toBe(sellerCalls + 1);
    expect(inspection.usage).toEqual({
      inputTokens: run.state?.usage.inputTokens,
      outputTokens: run.state?.usage.outputTokens,
    });
  });
});
