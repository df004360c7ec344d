import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import { lookAgent, THREAD } from "./testing/idless-calls.test.data.js";

const scratch = scratchDirectory("langchain-idless-", { beforeAll, afterAll });

describe("tool calls without ids, two in one turn", () => {
  it("resumed after one finished and the other was in flight: only the one in flight runs again", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "second-in-flight.db");
    const crashed = await crashInChild("idless-calls:second-in-flight", path);
    expect(crashed.count("look:a")).toBe(1);
    expect(crashed.count("look:b")).toBe(1);
    const store = await openLedger(path, onTestFinished);

    // LangGraph saved a's write and runs b again: b must not be matched with a's answer (by
    // name and order alone it was, and every resume failed with replay-divergence).
    const { agent, handler, looked } = lookAgent(store);
    const result = await agent.invoke(null, threadConfig(handler, THREAD));
    expect(result.messages.at(-1)?.content).toBe("value a|value b");
    expect(looked).toEqual(["b"]);
  });
});
