import { join } from "node:path";
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { generateText, type ModelMessage, streamText, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation } from "./restore-messages.js";
import { crashableModel } from "./testing/crash-in-child.test.data.js";
import { assistant as actor, textResult, usage } from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-provider-approval-", { beforeAll, afterAll });
const SESSION = "chat-repos";
const ASK: ModelMessage = { role: "user", content: "delete the repo x" };

/**
 * A model whose provider runs an MCP server's tool itself, and first asks the app to approve
 * the call (its own approval request, with its own id); given the answer, it says it is done.
 */
function mcpModel(prompts: LanguageModelV3Prompt[]) {
  return crashableModel((options) => {
    prompts.push(options.prompt);
    if (options.prompt.at(-1)?.role === "tool") return textResult("done");
    return {
      content: [
        {
          type: "tool-call",
          toolCallId: "mcp-1",
          toolName: "mcp.delete_repo",
          input: JSON.stringify({ repo: "x" }),
          providerExecuted: true,
          dynamic: true,
        },
        { type: "tool-approval-request", approvalId: "mcpr_1", toolCallId: "mcp-1" },
      ],
      finishReason: { unified: "stop", raw: "stop" },
      usage: usage(10, 3),
      warnings: [],
    };
  });
}

/** One turn of the chat on its own run, with generateText or streamText: the SDK's messages. */
async function turn(
  store: SqliteEventStore,
  call: "generateText" | "streamText",
  runId: string,
  messages: ModelMessage[],
  prompts: LanguageModelV3Prompt[],
): Promise<ModelMessage[]> {
  const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
  const model = wrapLanguageModel({
    model: mcpModel(prompts),
    middleware: ledgerMiddleware({ recorder }),
  });
  if (call === "generateText") return (await generateText({ model, messages })).response.messages;
  const result = streamText({ model, messages });
  await result.consumeStream();
  return (await result.response).messages;
}

describe("restoreConversation: a provider's approval request for a tool it executes", () => {
  it.each([
    ["generateText", true],
    ["generateText", false],
    ["streamText", true],
    ["streamText", false],
  ] as const)(
    "%s (approved: %s): kept with the provider's id, and the answer reaches the provider",
    async (call, approved) => {
      const path = join(scratch, `${call}-${approved}.db`);
      let store = new SqliteEventStore({ path });
      await store.init();
      const prompts: LanguageModelV3Prompt[] = [];
      const live = await turn(store, call, "turn-1", [ASK], prompts);
      await store.close();

      // The ledger alone, in a new process: the SDK's own messages, and the call to answer.
      store = new SqliteEventStore({ path });
      await store.init();
      const { messages, pendingToolCalls } = await restoreConversation(store, {
        sessionId: SESSION,
        runId: "turn-1",
      });
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: ASK.content }] },
        ...JSON.parse(JSON.stringify(live)),
      ]);
      expect(pendingToolCalls).toEqual([
        {
          toolCallId: "mcp-1",
          toolName: "mcp.delete_repo",
          input: { repo: "x" },
          requested: false,
          approvalId: "mcpr_1",
          providerExecuted: true,
        },
      ]);

      const answers = pendingToolCalls.map(({ approvalId, providerExecuted }) => ({
        type: "tool-approval-response" as const,
        approvalId: String(approvalId),
        approved,
        providerExecuted,
      }));
      await turn(store, call, "turn-2", [...messages, { role: "tool", content: answers }], prompts);
      await store.close();
      // The provider is given the answer; denied, generateText adds an execution-denied result
      // (streamText does not: the SDK's own difference).
      const toolMessage = prompts.at(-1)?.at(-1);
      expect(toolMessage).toEqual({
        role: "tool",
        content: [
          { type: "tool-approval-response", approvalId: "mcpr_1", approved },
          ...(approved || call === "streamText"
            ? []
            : [
                {
                  type: "tool-result",
                  toolCallId: "mcp-1",
                  toolName: "mcp.delete_repo",
                  output: {
                    type: "execution-denied",
                    providerOptions: { openai: { approvalId: "mcpr_1" } },
                  },
                },
              ]),
        ],
      });
    },
  );
});
