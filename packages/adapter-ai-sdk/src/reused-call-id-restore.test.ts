import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreConversation } from "./restore-messages.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  ASK,
  SESSION,
  type Shop,
  shopTools,
  shopTurn,
  turn,
} from "./testing/refund-shop.test.data.js";
import { textResult, toolCall, toolCallsResult } from "./testing/scripted-model.test.data.js";

// Providers reuse their toolCallIds from turn to turn (call_0): a later turn's call with the id
// of an earlier turn's call that waits for approval is that later turn's own, whether its own
// model call asked for it or it ran approved in the turn after it (to its end, or cut off by a
// SIGKILL). The earlier turn's call still waits for its approval.

const scratch = scratchDirectory("ai-sdk-reused-call-id-restore-", { beforeAll, afterAll });

describe("restoreConversation: a later turn's call that reuses the toolCallId of a call waiting for approval", () => {
  it("a later turn's own call that reuses the id (asked by its own model call) is not taken for the approved one", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "reused-id.db");
    const shop: Shop = { refunds: [], prompts: [] };
    await turn(path, shop, "turn-1", [ASK]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    // The app dropped the chat left at the approval; the next turn's model asks a small refund,
    // which needs none, with the same toolCallId (providers reuse call_0 from turn to turn).
    await shopTurn(
      store,
      shop,
      "turn-2",
      [{ role: "user", content: "refund order 9" }],
      (prompt) =>
        prompt.at(-1)?.role === "tool"
          ? textResult("done")
          : toolCallsResult(toolCall("call_0", "refund", { order: "9", amount: 5 })),
    );
    expect(shop.refunds).toEqual(["7", "9"]);
    const restored = await restoreConversation(store, {
      sessionId: SESSION,
      runId: "turn-1",
      tools: shopTools(shop),
    });
    expect(restored.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "42", amount: 50, reason: "customer asked" },
        requested: false,
        approvalId: expect.stringMatching(/^ledger-approval-.+-call_0$/),
      },
    ]);
  });

  it("a later turn's approved call that reuses the id is not taken for an earlier turn's call that never ran", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "reused-approved-id.db");
    const shop: Shop = { refunds: [], prompts: [] };
    await turn(path, shop, "turn-1", [ASK]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const tools = shopTools(shop);
    // The app dropped the chat left at refund 42's approval. A new message: the model asks
    // refund 9, which needs approval too, with the same toolCallId.
    const refund9 = (prompt: LanguageModelV3Prompt) =>
      prompt.at(-1)?.role === "tool"
        ? textResult("done")
        : toolCallsResult(toolCall("call_0", "refund", { order: "9", amount: 50 }));
    await shopTurn(store, shop, "turn-2", [{ role: "user", content: "refund order 9" }], refund9);
    const second = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2", tools });
    const approvalId = String(second.pendingToolCalls[0]?.approvalId);
    // Approved: turn 3 makes refund 9 before its first model call.
    await shopTurn(
      store,
      shop,
      "turn-3",
      [
        ...second.messages,
        { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] },
      ],
      refund9,
    );
    expect(shop.refunds).toEqual(["7", "9"]);

    // Refund 42 never ran: turn 1 still waits for its approval, and shows no result for it.
    const first = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1", tools });
    expect(first.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "42", amount: 50, reason: "customer asked" },
        requested: false,
        approvalId: expect.stringMatching(/^ledger-approval-.+-call_0$/),
      },
    ]);
    expect(first.messages.at(-1)).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "refund",
          output: { type: "text", value: "refunded 7 (customer asked)" },
        },
        {
          type: "tool-result",
          toolCallId: "call_2",
          toolName: "lookup",
          output: { type: "text", value: "order 42: shipped" },
        },
      ],
    });
    // Turn 2, which asked for refund 9, has it done.
    const asked = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2", tools });
    expect(asked.pendingToolCalls).toEqual([]);
    expect(asked.messages.at(-1)).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_0",
          toolName: "refund",
          output: { type: "text", value: "refunded 9 (customer asked)" },
        },
      ],
    });
  });

  it("a SIGKILL inside a later turn's approved call that reuses the id: the earlier turn's call still waits for its approval", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "reused-approved-id-crash.db");
    const child = await crashInChild(
      "refund shop inside a later turn's approved refund reusing the id",
      path,
    );
    expect(child.effects).toEqual(["refund:9"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const tools = shopTools({ refunds: [], prompts: [] });

    // Refund 42 never started: not in flight, offered for approval.
    const first = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1", tools });
    expect(first.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "42", amount: 50, reason: "customer asked" },
        requested: false,
        approvalId: expect.stringMatching(/^ledger-approval-.+-call_0$/),
      },
    ]);
    // Refund 9 was cut off: in flight in the turn that asked, and in the turn cut off.
    const asked = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2", tools });
    expect(asked.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "9", amount: 50, reason: "customer asked" },
        requested: true,
      },
    ]);
    const cut = await restoreConversation(store, { sessionId: SESSION, runId: "turn-3", tools });
    expect(cut).toEqual(asked);
  });
});
