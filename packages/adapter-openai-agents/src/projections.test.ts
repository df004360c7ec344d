import { MemoryEventStore, toAtif } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { runWithLedger } from "./index.js";
import { fixture } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";

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
