import { join } from "node:path";
import { toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { deletingAgent } from "./testing/approval-agents.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-paused-projections-", { beforeAll, afterAll });

async function runStatus(store: SqliteEventStore): Promise<unknown> {
  const spans = await exportedSpans(store, "s");
  const run = spans.find((span) => span.name === "invoke_agent main");
  return run?.attributes["agent_ledger.run.status"];
}

describe("ATIF and OpenTelemetry of a run paused at an approval", () => {
  test("say it is paused, with the calls it waits on, until the decision", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "paused.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = deletingAgent();
    const paused = await runWithLedger(made.agent, "clean up", runOptions(store, made.model));
    expect(paused.status).toBe("interrupted");

    const trajectory = await toAtif(store, "s");
    expect(trajectory.extra).toMatchObject({
      status: "paused",
      awaiting_decision: {
        calls: [
          { name: "delete_file", tool_call_id: "call_a", arguments: { path: "/a" } },
          { name: "delete_file", tool_call_id: "call_b", arguments: { path: "/b" } },
        ],
      },
    });
    const asked = trajectory.steps.find((step) => step.tool_calls?.length);
    // Asked by the model and waiting on a person: not "not-requested" (the loop never asked).
    expect(asked?.tool_calls?.map((call) => [call.tool_call_id, call.extra?.status])).toEqual([
      ["call_a", "awaiting-decision"],
      ["call_b", "awaiting-decision"],
    ]);
    expect(await runStatus(store)).toBe("paused");

    // Decided and resumed: the run goes on, and is no longer said paused.
    const state = paused.state;
    for (const item of paused.interruptions) state?.approve(item);
    const done = await resumeRun(made.agent, { ...runOptions(store, made.model), state });
    expect(done.status).toBe("completed");
    expect(made.deleted).toEqual(["/a", "/b"]);
    const after = await toAtif(store, "s");
    expect(after.extra?.status).toBe("completed");
    expect(after.extra?.awaiting_decision).toBeUndefined();
    expect(await runStatus(store)).toBe("completed");
  });
});
