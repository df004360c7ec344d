import { join } from "node:path";
import { type EventStore, inspectSession, MemoryEventStore, openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { withNextSteps } from "./next-steps.js";
import { pausedRuns } from "./paused-runs.js";
import { renderInspection } from "./render-inspection.js";
import {
  pausedAtAgentCallInFlight,
  pausedAtCallInFlight,
  pausedInsideAgentCall,
  runBin,
} from "./session-fixture.test.data.js";

const IN_FLIGHT =
  "left in flight by a crash or by its caller stopping it: it may have had its effect, check it before approving";

/** A SQLite ledger holding what `record` writes, closed again: what the binary is run on. */
async function sqliteLedger<T>(record: (store: EventStore) => Promise<T>) {
  const path = join(scratchDirectory("agent-ledger-crashed-pause-", onTestFinished), "ledger.db");
  const store = await openStore(`sqlite:${path}`);
  const recorded = await record(store);
  await store.close();
  return { url: `sqlite:${path}`, recorded };
}

describe("a call in flight at the crash that a paused run asks about as an approval", () => {
  it("is said to be left in flight, by a crash or its caller, listed as unresolved with a resolve command, and the pause says so", async () => {
    // It was said to be "in flight when the process died": the ledger holds no outcome, and
    // nothing says why. A caller's abort (an AI SDK tool's abortSignal, a LangChain run's
    // signal) leaves a call so too, writing nothing of the abort.
    const store = new MemoryEventStore();
    const { pay } = await pausedAtCallInFlight(store);
    const inspection = await inspectSession(store, "crashed");
    const text = renderInspection(inspection);
    const pause = `paused at an approval: pay [c_pay] {"amount":5} (agent shop) (${IN_FLIGHT}; attempt ${pay.attemptId}); decide it with the app's approval screen, or decide it with agent-ledger resolve (below) and resume the run without a state`;
    expect(text.split("\n")[0]).toBe(
      "session crashed  3 events  1 run  1 unresolved  1 paused at an approval",
    );
    expect(text).toContain(
      `⏸ 1 run paused at an approval, waiting for a person to decide in the app that runs the agent, or with agent-ledger resolve for a call left in flight by a crash or by its caller stopping it:\n   run main: ${pause}\n`,
    );
    expect(text).not.toContain("not lost in a crash");
    expect(text).not.toContain("WAITING ON A DECISION");
    expect(text).toContain(
      `     next: it was left in flight by a crash or by its caller stopping it, and may have had its effect; run main is paused asking about it as an approval (above). Check the effect, then decide it in the app, or here: agent-ledger resolve --abandon "reason" -- crashed ${pay.attemptId} (then resume the run without a state: the decision is applied to it)\n`,
    );
    expect(withNextSteps(inspection)).toMatchObject({
      nextSteps: [
        {
          action: "resolve",
          command: `agent-ledger resolve --abandon "reason" -- crashed ${pay.attemptId}`,
          pausedRunId: "main",
        },
      ],
      paused: [{ runId: "main", text: pause, inFlight: true }],
    });
  });

  it("the runs made inside the call in flight read RUNNING, not PAUSED: they crashed with it", async () => {
    // They read PAUSED, as the runs of an ordinary pause do, while their calls in flight were
    // listed unresolved with a resolve command: a run waiting on an app's decision that was not.
    const store = new MemoryEventStore();
    await pausedAtAgentCallInFlight(store, "crashed-agent");
    const text = renderInspection(await inspectSession(store, "crashed-agent"));
    const line = (runId: string) => text.split("\n").find((each) => each.includes(`(${runId})`));
    expect(line("main")).toMatch(/ PAUSED /);
    expect(line("payer")).toMatch(/ RUNNING /);
    expect(text.split("\n").find((each) => each.includes("tool charge [c_charge]"))).toContain(
      "!! UNRESOLVED",
    );
  });

  it("beside an ordinary approval, the pause says which call resolve may decide", async () => {
    const store = new MemoryEventStore();
    await pausedAtCallInFlight(store, "mixed", { alsoAsked: true });
    const [paused] = pausedRuns((await inspectSession(store, "mixed")).runs);
    expect(paused?.text).toContain(
      'refund [c_refund] {"amount":2} (agent shop); decide them with the app\'s approval screen, or decide the call left in flight with agent-ledger resolve (below) and resume the run without a state',
    );
  });

  it("agent-ledger resolve decides it, which ends the pause", async () => {
    const { url, recorded } = await sqliteLedger((store) => pausedAtCallInFlight(store));
    const { pay } = recorded;
    const resolved = await runBin([
      "--store",
      url,
      "resolve",
      "--abandon",
      "paid: the bank shows it",
      "--",
      "crashed",
      pay.attemptId,
    ]);
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);
    const after = await runBin(["--store", url, "inspect", "crashed", "--json"]);
    const inspection = JSON.parse(after.stdout) as { unresolved: unknown[]; paused?: unknown };
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.paused).toBeUndefined();
  });

  it("once resolve decided its only call, the run is said to be open with nothing in flight, with what to do", async () => {
    // It read RUNNING with no next step: a run whose process died read as one at work.
    const { url, recorded } = await sqliteLedger((store) => pausedAtCallInFlight(store));
    const resolved = await runBin([
      "--store",
      url,
      "resolve",
      "--abandon",
      "paid: the bank shows it",
      "--",
      "crashed",
      recorded.pay.attemptId,
    ]);
    expect(resolved.code).toBe(0);
    const next =
      "if no process runs it any more, resume it in the app that runs the agent (the resume goes on from what the ledger holds); if no agent will, it can stay open: no call in it waits on a decision";
    const text = await runBin(["--store", url, "inspect", "crashed"]);
    expect(text.stdout).toMatch(/\(main\) {2}RUNNING /);
    expect(text.stdout).toContain(
      `\n○ 1 run open with nothing in flight: inspect cannot tell a run whose process is still at work from one whose process died (after a decision with agent-ledger resolve, say):\n   run main: ${next}\n`,
    );
    const json = await runBin(["--store", url, "inspect", "crashed", "--json"]);
    expect(JSON.parse(json.stdout).openRuns).toEqual([{ runId: "main", text: next }]);
  });

  it("a run at work with nothing in flight is said to be open only when nothing else says what to do", async () => {
    const store = new MemoryEventStore();
    const { main } = await pausedAtCallInFlight(store, "asked");
    // Paused, and then with a call in flight: each has its own next step.
    expect(renderInspection(await inspectSession(store, "asked"))).not.toContain("○");
    await main.checkpoint({ state: "no pause" });
    expect(renderInspection(await inspectSession(store, "asked"))).not.toContain("○");
    expect(withNextSteps(await inspectSession(store, "asked"))).not.toHaveProperty("openRuns");
  });

  it("an agent call an ordinary pause keeps open is still refused: the app decides that pause", async () => {
    const { url, recorded } = await sqliteLedger((store) => pausedInsideAgentCall(store));
    const { outer } = recorded;
    const refused = await runBin([
      "--store",
      url,
      "resolve",
      "--abandon",
      "why",
      "--",
      "paused",
      outer.attemptId,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`attempt ${outer.attemptId} goes on when run main does`);
  });
});
