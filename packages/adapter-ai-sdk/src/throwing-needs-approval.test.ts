import { join } from "node:path";
import { LedgerError } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreConversation } from "./restore-messages.js";
import { ASK, SESSION, type Shop, shopTools, turn } from "./testing/refund-shop.test.data.js";

const scratch = scratchDirectory("ai-sdk-throwing-needs-approval-", { beforeAll, afterAll });

describe("restoreConversation: a needsApproval function that throws", () => {
  it("rejects the restore with invalid-argument naming the tool, its call and the path, the error as cause", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "throws.db");
    const shop: Shop = { refunds: [], prompts: [] };
    await turn(path, shop, "turn-1", [ASK]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    // The limit is looked up in a service that is down when the chat is restored.
    const down = new Error("limits service down");
    const tools = shopTools(shop);
    tools.refund.needsApproval = async () => {
      throw down;
    };
    const error = await restoreConversation(store, {
      sessionId: SESSION,
      runId: "turn-1",
      tools,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect(error).toMatchObject({
      path: "$.tools.refund.needsApproval",
      cause: down,
      details: { toolName: "refund", toolCallId: "call_0" },
    });
    expect(String((error as Error).message)).toContain(
      "needsApproval of tool refund threw for tool call call_0: limits service down",
    );
  });
});
