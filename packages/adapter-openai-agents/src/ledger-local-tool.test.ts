import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { Agent, computerTool, setTracingDisabled, shellTool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ledgerLocalTool, ledgerToolEffect, resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { FailingStore } from "./testing/failing-store.js";
import { invalidArgumentAt } from "./testing/invalid-argument.test.data.js";
import { cleaningAgent, deployingAgent } from "./testing/local-tool-agents.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-local-tool-", { beforeAll, afterAll });
ledgers.prepare(
  "shell: dies in the model call after the deploy",
  "shell: dies inside the deploy",
  "shell, approved by its onApproval: dies inside the deploy",
  "shell, deploy approved: dies in the model call after the deploy",
  "apply patch: dies in the model call after the delete",
);

const DEPLOY = "ran ./deploy.sh prod";

async function toolEvents(store: EventStore) {
  return (await readWholeSession(store, "s")).filter((event) => event.type.startsWith("tool."));
}

describe("shell and apply-patch calls are recorded like function tool calls", () => {
  test("a shell command that ran before the crash is answered from the ledger on resume, not run again", async () => {
    const { store, first } = await ledgers.crashed(
      "shell: dies in the model call after the deploy",
    );
    expect(first.effects).toEqual([DEPLOY]);
    const [requested, completed] = await toolEvents(store);
    expect(requested?.payload).toMatchObject({
      toolCallId: "call_sh",
      name: "shell",
      args: { commands: ["./deploy.sh prod"] },
      effect: { kind: "write", idempotent: false },
    });
    expect(completed?.type).toBe("tool.completed");

    const second = deployingAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(String(result.finalOutput)).toContain("deployed");
    expect(second.effects).toEqual([]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a shell command in flight at the crash is asked about; rejected, it is not run again and the model is told", async () => {
    const { store, first } = await ledgers.crashed("shell: dies inside the deploy");
    expect(first.effects).toEqual([DEPLOY]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([
      expect.objectContaining({ toolCallId: "call_sh", status: "requested" }),
    ]);

    const second = deployingAgent();
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    const { state, item } = firstInterruption(paused);
    expect(item.rawItem).toMatchObject({ type: "shell_call", callId: "call_sh" });
    state.reject(item, { message: "deployed by hand" });
    second.model.calls = 1;
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), state });

    expect(result.status).toBe("completed");
    expect(String(result.finalOutput)).toContain("deployed by hand");
    expect(second.effects).toEqual([]);
    const events = await readWholeSession(store, "s");
    expect(events.filter((event) => event.type === "attempt.abandoned")).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a shell command in flight at the crash that a person approves runs once more, as its retry", async () => {
    const { store } = await ledgers.crashed("shell: dies inside the deploy");
    const second = deployingAgent();
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    second.model.calls = 1;
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), state });

    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([DEPLOY]);
    const retry = (await toolEvents(store)).filter((event) => event.type === "tool.requested");
    expect(retry).toHaveLength(2);
    expect(retry[1]?.retryOf).toBe(retry[0]?.attemptId);
  });

  test("a shell command in flight at the crash is a person's to decide, not the tool's onApproval's", async () => {
    const { store, first } = await ledgers.crashed(
      "shell, approved by its onApproval: dies inside the deploy",
    );
    expect(first.effects).toEqual([DEPLOY]);
    const second = deployingAgent(undefined, { needsApproval: true, autoApprove: true });
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    expect(firstInterruption(paused).item.rawItem).toMatchObject({ callId: "call_sh" });
    expect(second.effects).toEqual([]);
  });

  test("a shell command a person approved on a copy of the state is recorded, and not run again on resume", async () => {
    const { store, first } = await ledgers.crashed(
      "shell, deploy approved: dies in the model call after the deploy",
    );
    expect(first.interruptions).toEqual([{ callId: "call_sh", name: "shell" }]);
    expect(first.effects).toEqual([DEPLOY]);
    expect((await toolEvents(store)).map((event) => event.type)).toEqual([
      "tool.requested",
      "tool.completed",
    ]);

    const second = deployingAgent(undefined, { needsApproval: true });
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([]);
  });

  test("a patch applied before the crash is answered from the ledger on resume, not applied again; what the editor wrote into the run's context is given to it again", async () => {
    const { store, first } = await ledgers.crashed(
      "apply patch: dies in the model call after the delete",
    );
    expect(first.effects).toEqual(["delete prod.db"]);
    expect((await toolEvents(store))[0]?.payload).toMatchObject({
      toolCallId: "call_ap",
      name: "apply_patch",
      args: { type: "delete_file", path: "prod.db" },
      effect: { kind: "write", idempotent: false },
    });

    const second = cleaningAgent();
    second.model.calls = 1;
    const context: { lastDeleted?: string } = {};
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([]);
    expect(context).toEqual({ lastDeleted: "prod.db" });
  });

  test("fails closed: the store refusing the request, the command does not run and the run stops, open", async () => {
    const store = new FailingStore();
    store.failWhen = (request) => request.events.some((event) => event.type === "tool.requested");
    const first = deployingAgent();
    await expect(
      runWithLedger(first.agent, "deploy", runOptions(store, first.model)),
    ).rejects.toMatchObject({
      code: "store-unavailable",
    });
    expect(first.effects).toEqual([]);
    // No model call after the refusal.
    expect(first.model.calls).toBe(1);
    expect((await store.runHead({ sessionId: "s", runId: "root" })).status).toBe("running");
  });

  test("ledgerLocalTool declares a tool's effect, and refuses what is not a local shell or apply-patch tool", () => {
    const shell = shellTool({ shell: { run: async () => ({ output: [] }) } });
    ledgerLocalTool(shell, { effect: "read", idempotent: true });
    expect(ledgerToolEffect(shell)).toEqual({ kind: "read", idempotent: true });
    const wrap = ledgerLocalTool as (...args: unknown[]) => unknown;
    expect(() => wrap({ type: "shell", name: "shell" })).toThrow(
      invalidArgumentAt("$.tool", /ledgerLocalTool wraps a local shell tool/),
    );
    expect(() => wrap(shell, { idempotent: "yes" })).toThrow(
      invalidArgumentAt("$.idempotent", /./),
    );
  });
});

describe("computer tools cannot be recorded", () => {
  test("runWithLedger refuses an agent with a computer tool before anything is recorded", async () => {
    const store = new MemoryEventStore();
    const computer = computerTool({
      computer: {
        environment: "ubuntu",
        dimensions: [800, 600],
        screenshot: async () => "",
        click: async () => {},
        doubleClick: async () => {},
        drag: async () => {},
        keypress: async () => {},
        move: async () => {},
        scroll: async () => {},
        type: async () => {},
        wait: async () => {},
      },
    });
    const agent = new Agent({ name: "desk", tools: [computer] });
    const first = deployingAgent();
    await expect(runWithLedger(agent, "click", runOptions(store, first.model))).rejects.toThrow(
      invalidArgumentAt(
        "$.agent",
        /computer tool "computer_use_preview", which the ledger cannot record/,
      ),
    );
    expect(await readWholeSession(store, "s")).toEqual([]);
  });
});
