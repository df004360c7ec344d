import { MemoryEventStore, toAtif } from "@agent-ledger/core";
import { compiledBeside } from "@agent-ledger/core/testing";
import { Agent, MCPServerStdio, setTracingDisabled } from "@openai/agents";
import { describe, expect, onTestFinished, test } from "vitest";
import { runWithLedger } from "./run-with-ledger.js";
import { runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// The MCP server is real (testing/receipts-mcp-server.ts): its receipt tool answers with a text, a text
// resource, a blob resource and a resource link, as MCP gives them. The tool's result is
// recorded as that content list; the SDK gives the model a list holding resources as its JSON
// text (only text, image and file items are given as content parts), so ATIF shows the result
// as text where the model read it, and its resources where the run ended at the tool.

// The compiled server, beside this file's compiled copy (tests run after `tsc -b`).
const SERVER = compiledBeside("./testing/receipts-mcp-server.js", import.meta.url);

async function connectedServer() {
  const server = new MCPServerStdio({
    name: "receipts",
    command: process.execPath,
    args: [SERVER],
  });
  await server.connect();
  onTestFinished(() => server.close());
  return server;
}

const resultOf = async (store: MemoryEventStore) =>
  (await toAtif(store, "s")).steps.flatMap((step) => step.observation?.results ?? [])[0];

describe("ATIF of an MCP tool's resources", () => {
  test("where the run ends at the tool: a text resource as its text, a blob and a link named as files", async () => {
    // The resources were dropped: the observation had the text item only.
    const store = new MemoryEventStore();
    const server = await connectedServer();
    const agent = new Agent({
      name: "clerk",
      mcpServers: [server],
      toolUseBehavior: "stop_on_first_tool",
    });
    const model = new ScriptedModel([() => [functionCall("receipt", {}, "call_receipt")]]);
    await runWithLedger(agent, "the receipt", runOptions(store, model));
    const result = await resultOf(store);
    expect(result?.content).toEqual([
      { type: "text", text: "receipt 7" },
      { type: "text", text: "[resource: shop://receipts/7.txt, text/plain]\nbook: 7" },
      { type: "text", text: "[file omitted: shop://slips/7.pdf, application/pdf, 8 bytes]" },
      { type: "text", text: "[file omitted: shop://terms.md, text/markdown]" },
    ]);
    const completed = (await store.readRun({ sessionId: "s", runId: "root" })).events.find(
      (event) => event.type === "tool.completed",
    );
    expect(result?.extra).toEqual({
      files_omitted: [
        {
          part: 2,
          media_type: "application/pdf",
          uri: "shop://slips/7.pdf",
          size_bytes: 8,
          reason: "bytes recorded in the ledger",
          event_id: completed?.eventId,
        },
        {
          part: 3,
          media_type: "text/markdown",
          filename: "terms.md",
          url: "shop://terms.md",
          reason: "ATIF content parts are text and images only",
          event_id: completed?.eventId,
        },
      ],
    });
  });

  test("where the run goes on: text, the result's JSON, as the SDK gave it to the model", async () => {
    const store = new MemoryEventStore();
    const server = await connectedServer();
    const agent = new Agent({ name: "clerk", mcpServers: [server] });
    const model = new ScriptedModel([
      () => [functionCall("receipt", {}, "call_receipt")],
      () => [message("a book for 7")],
    ]);
    await runWithLedger(agent, "the receipt", runOptions(store, model));
    const content = (await resultOf(store))?.content;
    expect(typeof content).toBe("string");
    expect(JSON.parse(String(content))).toEqual([
      { type: "text", text: "receipt 7" },
      expect.objectContaining({ type: "resource" }),
      expect.objectContaining({ type: "resource" }),
      expect.objectContaining({ type: "resource_link", uri: "shop://terms.md" }),
    ]);
  });
});
