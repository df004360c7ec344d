import { join } from "node:path";
import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { agentWithDynamicPrompt, SESSION } from "./testing/model-in-flight.test.data.js";

const scratch = scratchDirectory("langchain-in-flight-", { beforeAll, afterAll });

describe("a model call in flight at a crash, asked again with another prompt on resume", () => {
  it("is closed (abandoned) and the new call is the next attempt of its step", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "ledger.db");
    await crashInChild("model-in-flight", path);
    const store = await openLedger(path, onTestFinished);
    expect((await inspectSession(store, SESSION)).unresolved).toHaveLength(1);

    // A new process: its clock has moved on, so the same turn is asked with another prompt.
    const second = agentWithDynamicPrompt(store, { clock: 1 });
    const result = await second.invoke(null);
    expect(result.messages.at(-1)?.content).toBe("hello");
    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    const steps = (runs[0]?.steps ?? []).filter((step) => step.kind === "model");
    expect(steps.map((step) => step.attempts.map((attempt) => attempt.status))).toEqual([
      ["abandoned", "completed"],
    ]);
  });
});
