import { join } from "node:path";
import { toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { runWithLedger } from "./index.js";
import { declinedChargeAgent } from "./testing/charging-agents.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-atif-failures-", { beforeAll, afterAll });

describe("ATIF of a run whose tool threw (the SDK tells the model and the run goes on)", () => {
  test("the call's observation is what the model read, the error beside it", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "declined.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = declinedChargeAgent();
    // The model answers with the last item it was given: what it was told of the charge.
    const result = await runWithLedger(made.agent, "go", {
      store,
      sessionId: "declined",
      modelProvider: scriptedProvider(made.model),
    });
    const toldItem = JSON.parse(String(result.finalOutput)) as {
      type: string;
      output: { text: string };
    };
    expect(toldItem.type).toBe("function_call_result");

    const trajectory = await toAtif(store, "declined");
    const step = trajectory.steps.find((each) => each.tool_calls?.length);
    expect(step?.tool_calls?.map((call) => [call.function_name, call.extra?.status])).toEqual([
      ["charge", "failed"],
    ]);
    expect(step?.observation?.results).toEqual([
      {
        source_call_id: "call_1",
        content: toldItem.output.text,
        extra: { status: "failed", error: "TypeError: card declined" },
      },
    ]);
    expect(toldItem.output.text).toContain("card declined");
    expect(toldItem.output.text).not.toBe("TypeError: card declined");
  });
});
