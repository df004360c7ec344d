import { join } from "node:path";
import { inspectSession, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Agent, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { chargeCall, chargingAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-resumed-agent-mismatch-", { beforeAll, afterAll });
let files = 0;

async function sqliteStore(): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, `ledger-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

// The crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside `charge` (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-resumed-agent-mismatch-crash-", { beforeAll, afterAll });
ledgers.prepare("shop: dies inside charge");

// A resume given an agent other than the one the run was recorded with (a deploy that renamed
// it, or lost a tool) is told so in those words, at `$.agent`, with what to do; nothing written.
describe("resumeRun with an agent that is not the run's", () => {
  test("paused at an approval, with an agent that lacks a tool the paused state names: invalid-argument at $.agent, naming the tool and what to resume with", async () => {
    const store = await sqliteStore();
    const first = chargingAgent([[chargeCall(7, "call_1")]], undefined, { needsApproval: true });
    const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
    expect(paused.status).toBe("interrupted");
    const before = await readWholeSession(store, "s");

    const toolless = new Agent({ name: "main" });
    const error = await resumeRun(toolless, runOptions(store, first.model)).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.agent" });
    const { message } = error as Error;
    expect(message).toContain("Tool charge not found");
    expect(message).toContain("the agent given does not match the one the run was recorded with");
    expect(message).toContain("resume with the agent graph the run was recorded with");
    expect(message).not.toMatch(/does not load in @openai\/agents/);
    expect(await readWholeSession(store, "s")).toEqual(before);
  });

  test("crashed in a tool, resumed with a renamed copy (clone): refused at $.agent before anything is written; the original agent then resumes it", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const before = await readWholeSession(store, "s");
    const second = fixture();

    const renamed = second.main.clone({ name: "main-v2" });
    const error = await resumeRun(renamed, runOptions(store, second.model)).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.agent" });
    expect((error as Error).message).toContain(
      'run root was started by agent "main", and the agent given is "main-v2"',
    );
    expect(await readWholeSession(store, "s")).toEqual(before);
    expect(second.effects).toEqual([]);

    const paused = await resumeRun(second.main, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect((await inspectSession(store, "s")).runs[0]?.actor?.id).toBe("main");
  });
});
