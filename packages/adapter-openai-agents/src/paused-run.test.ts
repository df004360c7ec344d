import { join } from "node:path";
import { type EventStore, type JsonObject, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { chargeCall, chargingAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { agentToolFixture } from "./testing/writer-agent.js";

setTracingDisabled(true);

// The person on call reads these ledgers with the real `agent-ledger` binary, in a child process.
const scratch = scratchDirectory("oa-paused-run-", { beforeAll, afterAll });
let files = 0;
// The crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside the writer's `write`, after it wrote (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-paused-run-crash-", { beforeAll, afterAll });
ledgers.prepare(
  "writer as a tool: dies inside write",
  "shop, charge approved: dies after the decision is recorded",
);

async function sqliteLedger(): Promise<{ path: string; store: SqliteEventStore }> {
  const path = join(scratch, `ledger-${++files}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { path, store };
}

/** `agent-ledger inspect s`, as text and as JSON. */
async function inspect(path: string) {
  const text = await agentLedger(path, "inspect", "s");
  const json = await agentLedger(path, "inspect", "s", "--json");
  expect(text.code).toBe(0);
  expect(json.code).toBe(0);
  return { text: text.stdout, json: JSON.parse(json.stdout) };
}

async function checkpointCount(store: EventStore): Promise<number> {
  const events = await readWholeSession(store, "s");
  return events.filter((event) => event.type === "checkpoint.saved").length;
}

const DECIDE = "decide it with resumeRun";

describe("agent-ledger inspect on a run paused at an approval, its process gone", () => {
  test("a top-level approval: the run is said to be paused at it, with the call, and to be decided with resumeRun", async () => {
    const { path, store } = await sqliteLedger();
    const first = chargingAgent([[chargeCall(7, "c_charge")]], undefined, { needsApproval: true });
    const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
    expect(paused.status).toBe("interrupted");

    const { text, json } = await inspect(path);
    const words = `paused at an approval: charge [c_charge] {"amount":7} (agent main); ${DECIDE}`;
    expect(text).toContain(words);
    expect(text).not.toContain("agent-ledger resolve --");
    expect(json.runs[0].awaitingDecision).toMatchObject({
      calls: [{ name: "charge", toolCallId: "c_charge", args: { amount: 7 }, agent: "main" }],
    });
    expect(json.paused).toEqual([{ runId: "root", text: expect.stringContaining(words) }]);
    expect(json.nextSteps).toEqual([]);

    // Decided as it says: the run goes on and is paused no more.
    const second = chargingAgent([[chargeCall(7, "c_charge")]], undefined, { needsApproval: true });
    second.model.calls = 1;
    const again = await resumeRun(second.agent, runOptions(store, second.model));
    const { state, item } = firstInterruption(again);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    const after = await inspect(path);
    expect(after.text).not.toContain("paused at an approval");
    expect(after.json.paused).toBeUndefined();
  });

  test("resumeRun polled while the call is still undecided adds no checkpoint: the run is paused where it was", async () => {
    const { store } = await sqliteLedger();
    const first = chargingAgent([[chargeCall(7, "c_charge")]], undefined, { needsApproval: true });
    await runWithLedger(first.agent, "go", runOptions(store, first.model));
    const before = await readWholeSession(store, "s");
    for (let poll = 0; poll < 3; poll++) {
      const again = await resumeRun(first.agent, runOptions(store, first.model));
      expect(again.interruptions.map((item) => item.name)).toEqual(["charge"]);
    }
    expect(await readWholeSession(store, "s")).toEqual(before);
  });

  test("a RunState over the blob threshold: the checkpoint keeps a reference, and the run is inspected, polled and resumed from it", async () => {
    const { path, store } = await sqliteLedger();
    // The input is part of the RunState: with it the serialized state is far over 4 KB.
    const input = `go ${"a long brief. ".repeat(700)}`;
    const first = chargingAgent([[chargeCall(7, "c_charge")]], undefined, { needsApproval: true });
    const paused = await runWithLedger(first.agent, input, runOptions(store, first.model));
    expect(paused.status).toBe("interrupted");
    const before = await readWholeSession(store, "s");
    const saved = before.filter((event) => event.type === "checkpoint.saved");
    expect(saved).toHaveLength(1);
    const stored = saved[0]?.payload as JsonObject;
    expect(stored).toMatchObject({ format: "openai-agents.run-state", kind: "interruption" });
    expect(stored.state).toEqual({ $ledger: "text", ref: expect.stringMatching(/^sha256:/) });
    expect(saved[0]?.evidenceRefs).toContain((stored.state as JsonObject).ref);
    expect(JSON.stringify(stored).length).toBeLessThan(1000);

    const { json } = await inspect(path);
    expect(json.runs[0].awaitingDecision).toMatchObject({ calls: [{ toolCallId: "c_charge" }] });
    // Polled while undecided: loaded from the checkpoint, paused where it was, nothing added.
    const second = chargingAgent([[chargeCall(7, "c_charge")]], undefined, { needsApproval: true });
    second.model.calls = 1;
    const again = await resumeRun(second.agent, runOptions(store, second.model));
    expect(again.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(await readWholeSession(store, "s")).toEqual(before);
    const { state, item } = firstInterruption(again);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 7"]);
    // Went on from the checkpoint: one model call after it, none of the first run's again.
    expect(second.model.calls).toBe(2);
  });

  test("an approval inside an agent used as a tool: the open agent tool call is not offered for abandoning; the pause names the inner call and its agent", async () => {
    const { path, store } = await sqliteLedger();
    const first = agentToolFixture();
    const paused = await runWithLedger(first.main, "go", runOptions(store, first.model));
    expect(paused.interruptions.map((item) => item.name)).toEqual(["write"]);

    const { text, json } = await inspect(path);
    expect(text).toContain(
      `paused at an approval: write [call_write] {"text":"héllo 🌍"} (agent writer); ${DECIDE}`,
    );
    expect(text).not.toContain("--abandon");
    expect(text).toContain(
      "next: nothing to resolve: run root is paused at an approval (above) that this call waits on",
    );
    expect(json.unresolved.map((attempt: { name: string }) => attempt.name)).toEqual([
      "writer_tool",
    ]);
    expect(json.nextSteps).toEqual([{ action: "awaiting-decision", runId: "root" }]);

    // resumeRun asks about the write, as inspect said; asking again and again adds nothing.
    const checkpoints = await checkpointCount(store);
    for (let poll = 0; poll < 2; poll++) {
      const second = agentToolFixture();
      second.model.calls = 1;
      second.writerModel.calls = 1;
      const again = await resumeRun(second.main, runOptions(store, second.model));
      expect(again.interruptions.map((item) => [item.name, item.agent.name])).toEqual([
        ["write", "writer"],
      ]);
    }
    expect(await checkpointCount(store)).toBe(checkpoints);
  });

  test("agent-ledger resolve on the agent tool call the pause keeps open is refused as a usage error pointing to resumeRun; the ledger is left as it was", async () => {
    const { path, store } = await sqliteLedger();
    const first = agentToolFixture();
    await runWithLedger(first.main, "go", runOptions(store, first.model));
    const { json } = await inspect(path);
    const [writerTool] = json.unresolved;
    expect(writerTool.name).toBe("writer_tool");
    const before = await readWholeSession(store, "s");
    for (const decision of ["--abandon", "--approve"]) {
      const refused = await agentLedger(path, "resolve", "s", writerTool.attemptId, decision, "x");
      expect({ code: refused.code, decision }).toEqual({ code: 2, decision });
      expect(refused.stderr).toContain("resumeRun");
    }
    expect(await readWholeSession(store, "s")).toEqual(before);
  });

  test("a crash right after the person's decision was recorded: the run is not said to be waiting for a decision", async () => {
    const { path } = await ledgers.crashed(
      "shop, charge approved: dies after the decision is recorded",
    );
    const { text, json } = await inspect(path);
    expect(json.paused).toBeUndefined();
    expect(text).not.toContain("paused at an approval");
  });

  test("a crash inside the agent tool's inner call, then that call abandoned with agent-ledger resolve: the agent tool call needs nothing, and the run completes unasked", async () => {
    const { store, path, first } = await ledgers.crashed("writer as a tool: dies inside write");
    expect(first.effects).toEqual(["write héllo 🌍"]);
    const before = await inspect(path);
    const write = before.json.unresolved.find(
      (attempt: { name: string }) => attempt.name === "write",
    );
    expect(before.json.nextSteps).toEqual([
      { action: "decide-inner-first" },
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" --store sqlite:${path} -- s ${write.attemptId}`,
      },
    ]);
    // What the person found goes to the writer's model word for word.
    const reason = "written by hand already";
    const resolved = await agentLedger(path, "resolve", "s", write.attemptId, "--abandon", reason);
    expect(resolved.code).toBe(0);

    const { text, json } = await inspect(path);
    expect(json.nextSteps).toEqual([{ action: "none" }]);
    expect(text).not.toContain("agent-ledger resolve --");
    expect(text).toContain("next: nothing to decide");

    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    second.writerModel.calls = 1;
    const result = await resumeRun(second.main, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    expect(JSON.stringify(second.writerModel.requests[0]?.input)).toContain(reason);
    const after = await inspect(path);
    expect(after.json.unresolved).toEqual([]);
  });
});
