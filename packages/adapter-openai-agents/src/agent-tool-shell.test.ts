import { inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { deployingAgentAsTool } from "./testing/local-tool-agents.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside the deploy or in ops's model call after it (crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-agent-tool-shell-", { beforeAll, afterAll });
ledgers.prepare(
  "shell in an agent tool, deploy approved: dies inside the deploy",
  "shell in an agent tool, deploy approved: dies in ops's model call after the deploy",
);

const DEPLOY = "ran ./deploy.sh prod";

describe("a local shell inside an agent used as a tool (Agent.asTool), going on from its pause", () => {
  test("approved: the resumed run places the call, records it and runs the shell once", async () => {
    const store = new MemoryEventStore();
    const { effects, main, model } = deployingAgentAsTool();
    const paused = await runWithLedger(main, "go", runOptions(store, model));
    expect(paused.interruptions.map((item) => item.name)).toEqual(["shell"]);
    expect(effects).toEqual([]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(main, { ...runOptions(store, model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(effects).toEqual([DEPLOY]);
    expect((await toolCallEvents(store, "call_sh")).map((event) => event.type)).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash in ops's model call after the deploy: the resume answers the deploy from the ledger, not run again", async () => {
    const { store, first } = await ledgers.crashed(
      "shell in an agent tool, deploy approved: dies in ops's model call after the deploy",
    );
    expect(first.interruptions).toEqual([{ callId: "call_sh", name: "shell" }]);
    expect(first.effects).toEqual([DEPLOY]);
    expect((await toolCallEvents(store, "call_sh")).map((event) => event.type)).toEqual([
      "tool.requested",
      "tool.completed",
    ]);

    const second = deployingAgentAsTool();
    second.model.calls = 1;
    second.opsModel.calls = 1;
    const result = await resumeRun(second.main, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash inside the deploy: the resume asks about it, and rejected it is not run again", async () => {
    const { store, first } = await ledgers.crashed(
      "shell in an agent tool, deploy approved: dies inside the deploy",
    );
    expect(first.effects).toEqual([DEPLOY]);
    expect((await toolCallEvents(store, "call_sh")).map((event) => event.type)).toEqual([
      "tool.requested",
    ]);

    const second = deployingAgentAsTool();
    second.model.calls = 1;
    second.opsModel.calls = 1;
    const paused = await resumeRun(second.main, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["shell"]);
    expect(second.effects).toEqual([]);
    const { state, item } = firstInterruption(paused);
    state.reject(item);
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });
});
