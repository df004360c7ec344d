import { join } from "node:path";
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, type ModelMessage, type Tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation } from "./restore-messages.js";
import { crashableModel } from "./testing/crash-in-child.test.data.js";
import { ASK, SESSION, type Shop, shopTools } from "./testing/refund-shop.test.data.js";
import {
  assistant as actor,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// The ledger holds the prompt the model was given, not the messages the app gave the SDK: a
// restore asks a `needsApproval` function about the conversation in that form. These pin what
// it is given, as the README says, beside what the SDK gave it.

const scratch = scratchDirectory("ai-sdk-needs-approval-messages-", { beforeAll, afterAll });
const SYSTEM = "You are the shop's assistant.";

/** The shop's tools, its refund's `needsApproval` keeping the messages it is asked about. */
function askedTools(seen: unknown[][]) {
  const tools = shopTools({ refunds: [], prompts: [] } satisfies Shop);
  const refund: Tool = {
    ...tools.refund,
    needsApproval: async (input: { amount: number }, { messages }) => {
      seen.push(messages);
      return input.amount > 10;
    },
  };
  return { ...tools, refund };
}

describe("restoreConversation: the messages a needsApproval function is asked about", () => {
  it("the recorded prompt before the assistant message (content as parts), the system prompt only with includeSystem", async ({
    onTestFinished,
  }) => {
    const store = new SqliteEventStore({ path: join(scratch, "asked.db") });
    await store.init();
    onTestFinished(() => store.close());
    const recorder = new SessionRecorder({ store, sessionId: SESSION, runId: "turn-1", actor });
    const bySdk: unknown[][] = [];
    await generateText({
      model: wrapLanguageModel({
        model: crashableModel(() =>
          toolCallsResult(toolCall("call_0", "refund", { order: "42", amount: 50 })),
        ),
        middleware: ledgerMiddleware({ recorder }),
      }),
      system: SYSTEM,
      messages: [ASK],
      tools: wrapTools(askedTools(bySdk), { recorder }),
    });
    // The SDK: the messages it was given, without its `system` option.
    expect(bySdk).toEqual([[ASK]]);

    const address = { sessionId: SESSION, runId: "turn-1" };
    const user: ModelMessage = {
      role: "user",
      content: [{ type: "text", text: String(ASK.content) }],
    };
    const byRestore: unknown[][] = [];
    const restored = await restoreConversation(store, { ...address, tools: askedTools(byRestore) });
    expect(restored.pendingToolCalls[0]?.approvalId).toBeDefined();
    expect(byRestore).toEqual([[user]]);

    const withSystem: unknown[][] = [];
    await restoreConversation(store, {
      ...address,
      tools: askedTools(withSystem),
      includeSystem: true,
    });
    expect(withSystem).toEqual([[{ role: "system", content: SYSTEM }, user]]);
  });
});
