import { MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ledgerAgent, threadConfig } from "./testing/helpers.js";

const DSN = "postgres://bob:hunter2pw@db.local/app";

describe("a DSN a person pasted into a message, given to an agent", () => {
  it("is recorded with its password as *** in the graph's inputs and outputs, as in the model's request", async () => {
    const store = new MemoryEventStore();
    const { agent, handler } = ledgerAgent({
      store,
      sessionId: "s",
      runId: "r",
      answer: () => new AIMessage("noted"),
    });
    const content = `connect to ${DSN}`;
    const result = await agent.invoke(
      { messages: [{ role: "user", content }] },
      threadConfig(handler),
    );
    // The graph itself keeps the message as it was given.
    expect(result.messages[0]?.content).toBe(content);
    const events = await readWholeSession(store, "s");
    expect(JSON.stringify(events)).not.toContain("hunter2pw");
    const types = events.map((event) => event.type);
    expect(types).toContain("x.langchain.chain.started");
    expect(JSON.stringify(events)).toContain("postgres://bob:***@db.local/app");
  });
});
