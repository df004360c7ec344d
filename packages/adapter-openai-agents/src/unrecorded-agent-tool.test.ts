import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";
import { agentToolFixture } from "./testing/writer-agent.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-unrecorded-agent-tool-", { beforeAll, afterAll });
// The crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed right after the writer's child run started (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-unrecorded-agent-tool-crash-", { beforeAll, afterAll });
ledgers.prepare("writer as a tool: dies right after its run started");

/** Runs the writer fixture to its end on a fresh SQLite file; its path and what the tools did. */
async function completedRun(instrumented: boolean | "model only") {
  const path = join(scratch, `ledger-${String(instrumented).replace(" ", "-")}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  const made = agentToolFixture({ writeNeedsApproval: false, instrumented });
  const result = await runWithLedger(made.main, "go", runOptions(store, made.model));
  await store.close();
  expect(result.status).toBe("completed");
  return { path, effects: made.effects };
}

/** The lines of `agent-ledger inspect s` from the writer's child run (or writer_tool's call) on. */
async function inspectedWriter(path: string): Promise<string[]> {
  const text = await agentLedger(path, "inspect", "s");
  expect(text.code).toBe(0);
  const lines = text.stdout.split("\n");
  return lines.slice(lines.findIndex((line) => line.includes("writer_tool")));
}

// An agent used as a tool (Agent.asTool) that was not given to instrumentAgent runs its plain SDK
// tools unseen: its child run shows its model calls and reads as a whole story. The person reading
// the ledger is told that calls may be missing there, and what the app should have done.
describe("an agent used as a tool that was not given to instrumentAgent", () => {
  test("its child run holds only its model calls: inspect says calls inside may be missing, and to give the agent to instrumentAgent", async () => {
    const { path, effects } = await completedRun("model only");
    expect(effects).toEqual(["write héllo 🌍"]);
    const lines = await inspectedWriter(path);
    const child = lines.findIndex(
      (line) => line.includes("writer_tool (") && line.includes("COMPLETED"),
    );
    expect(child).toBeGreaterThan(-1);
    expect(lines.join("\n")).not.toContain("tool write [");
    expect(lines[child + 1]).toContain(
      "its agent does not record every call it makes: a call inside may have run unrecorded (give the agent behind writer_tool to instrumentAgent, after its last tool and handoff are added)",
    );
  });

  test("it recorded nothing at all (its model is its own, not recorded): inspect says so under the call", async () => {
    const { path } = await completedRun(false);
    const lines = await inspectedWriter(path);
    expect(lines[0]).toContain("writer_tool");
    expect(lines[1]).toContain(
      "its agent recorded nothing here: what it did ran unrecorded (give the agent behind writer_tool to instrumentAgent)",
    );
  });

  test("an instrumented agent's call made again after a crash: its retry has no child run of its own (its agent went on on the first one), and nothing is said of either", async () => {
    const { store, path } = await ledgers.crashed(
      "writer as a tool: dies right after its run started",
    );
    const next = agentToolFixture({ writeNeedsApproval: false });
    next.model.calls = 1;
    const result = await resumeRun(next.main, runOptions(store, next.model));
    expect(result.status).toBe("completed");
    const text = (await inspectedWriter(path)).join("\n");
    expect(text).toContain("↻ tool writer_tool [call_writer]");
    expect(text).toContain("tool write [call_write]");
    expect(text).not.toContain("instrumentAgent");
  });

  test("an instrumented agent's child run: no such line", async () => {
    const { path } = await completedRun(true);
    const text = (await inspectedWriter(path)).join("\n");
    expect(text).toContain("tool write [call_write]");
    expect(text).not.toContain("instrumentAgent");
  });
});
