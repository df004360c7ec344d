import { appendFileSync } from "node:fs";
import { instrumentAgent, ledgerTool } from "@agent-ledger/openai-agents";
import type { Model, ModelRequest, ModelResponse } from "@openai/agents";
import { Agent, tool, Usage } from "@openai/agents";
import { z } from "zod";
import { crashPoint } from "./crash-point.js";
import { functionCall, message, outputOf } from "./fake-model.js";

type OutputItem = ModelResponse["output"][number];

/** An offline model whose answer is a function of the request; one line per call it answers. */
function scriptedModel(workDir: string, decide: (request: ModelRequest) => OutputItem[]): Model {
  return {
    async getResponse(request) {
      appendFileSync(`${workDir}/model-calls.log`, "done\n");
      const usage = new Usage({ requests: 1, inputTokens: 5, outputTokens: 3, totalTokens: 8 });
      return { output: decide(request), usage, responseId: "resp_writer" };
    },
    // biome-ignore lint/correctness/useYield: this script is never streamed
    async *getStreamedResponse() {
      throw new Error("the writer example is not streamed");
    },
  };
}

/**
 * An editor agent that uses a writer agent as a tool (Agent.asTool): the writer's own calls
 * go to a child run. The writer's `publish` tool has the side effect (a line in
 * `<workDir>/published.log`) and is not idempotent.
 */
export function editorAgent(workDir: string) {
  const publish = ledgerTool(
    tool({
      name: "publish",
      description: "Publish a text",
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => {
        appendFileSync(`${workDir}/published.log`, `${text}\n`);
        await crashPoint("publish");
        return `published: ${text}`;
      },
    }),
    { idempotent: false, effect: "write" },
  );
  const writer = instrumentAgent(
    new Agent({
      name: "writer",
      model: scriptedModel(workDir, (request) => {
        const published = outputOf(request, "call_publish");
        if (published === undefined)
          return [functionCall("publish", { text: "Lamps are back" }, "call_publish")];
        return [message(`writer: ${published}`)];
      }),
      tools: [publish],
    }),
  );
  return new Agent({
    name: "editor",
    model: scriptedModel(workDir, (request) => {
      const written = outputOf(request, "call_writer");
      if (written === undefined)
        return [functionCall("writer_tool", { input: "announce the lamps" }, "call_writer")];
      return [message(`editor: ${written}`)];
    }),
    tools: [writer.asTool({ toolName: "writer_tool", toolDescription: "writes and publishes" })],
  });
}
