import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "@agent-ledger/cli";
import { inspectSession, openStore } from "@agent-ledger/core";
import { type StatusTreeRuns, scratchDirectory, statusTree } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { agentLedger, effects, killAt, lines, runToEnd } from "./agent-process.js";

/** Every directory a test here makes is inside this one, removed when the file is done. */
const scratch = scratchDirectory("oa-resume-", { beforeAll, afterAll });

function workspace() {
  const dir = mkdtempSync(join(scratch, "run-"));
  return { dir, db: join(dir, "ledger.db") };
}

async function unresolvedCount(db: string, sessionId: string): Promise<number> {
  const store = await openStore(`sqlite:${db}`);
  try {
    return (await inspectSession(store, sessionId)).unresolved.length;
  } finally {
    await store.close();
  }
}

describe("SIGKILL and resume in a new process", () => {
  // The uncrashed run every crashed+resumed run must equal: run once, by the first test that
  // asks (collecting the file's tests makes no workspace and starts no process).
  const runBaseline = async () => {
    const { dir, db } = workspace();
    const { decisions, ...outcome } = await runToEnd(["run", db, dir, "s", "r"]);
    expect(decisions).toEqual([]);
    return { outcome, ...effects(dir) };
  };
  let baselineRun: ReturnType<typeof runBaseline> | undefined;
  const baseline = () => {
    baselineRun ??= runBaseline();
    return baselineRun;
  };

  const scenarios = [
    { name: "(a) inside a tool call", point: "tool", stream: false, extraStarts: 0 },
    {
      name: "(b) between a model response and its tool",
      point: "before-tool",
      stream: false,
      extraStarts: 0,
    },
    // The model call in flight at the kill is made again (model calls count as idempotent).
    { name: "(c) during a streamed response", point: "stream", stream: true, extraStarts: 1 },
  ];

  for (const scenario of scenarios) {
    test(scenario.name, async () => {
      const expected = await baseline();
      expect(expected.outcome).toEqual({
        status: "completed",
        finalOutput: "Receipt: order call_order placed: lamp for 42 EUR",
      });
      expect(expected.orders).toHaveLength(1);
      expect(expected.completedCalls).toBe(5);

      const { dir, db } = workspace();
      const args = ["run", db, dir, "s", "r", ...(scenario.stream ? ["stream"] : [])];
      await killAt(args, scenario.point);
      expect(await unresolvedCount(db, "s")).toBe(scenario.point === "before-tool" ? 0 : 1);

      const { decisions, ...outcome } = await runToEnd(["resume", db, dir, "s", "r"]);
      expect(outcome).toEqual(expected.outcome);
      // Killed inside place_order: the resume gets it back as an approval, and the app approves
      // it (no order from that call in the log). Killed before it ran, nothing is asked.
      expect(decisions).toEqual(
        scenario.point === "tool"
          ? [{ name: "place_order", callId: "call_order", decision: "approved" }]
          : [],
      );
      expect(lines(join(dir, "orders.log"))).toEqual(expected.orders);
      // notify_warehouse returns nothing; it ran before the kill and is answered from the ledger.
      expect(expected.notified).toEqual(["lamp"]);
      expect(lines(join(dir, "warehouse.log"))).toEqual(expected.notified);
      const calls = lines(join(dir, "model-calls.log"));
      expect(calls.filter((line) => line === "done")).toHaveLength(expected.completedCalls);
      expect(calls.filter((line) => line === "start")).toHaveLength(
        expected.startedCalls + scenario.extraStarts,
      );
      expect(await unresolvedCount(db, "s")).toBe(0);
    });
  }

  for (const decision of ["approve", "abandon"] as const) {
    test(`(d) killed inside place_order, decided with agent-ledger resolve --${decision}`, async () => {
      const expected = await baseline();
      const { dir, db } = workspace();
      await killAt(["run", db, dir, "s", "r"], "tool");
      expect(lines(join(dir, "orders.log"))).toEqual([]);

      // The on-call person reads which call was in flight, on which run, with which arguments.
      const text = await agentLedger(db, "inspect", "s");
      expect(text.stdout).toContain("tool place_order [call_order]  !! UNRESOLVED");
      const { nextSteps: printed, ...inspection } = JSON.parse(
        (await agentLedger(db, "inspect", "s", "--json")).stdout,
      );
      expect(inspection.unresolved).toMatchObject([
        {
          kind: "tool",
          name: "place_order",
          toolCallId: "call_order",
          runId: "r",
          request: { args: { item: "lamp", price: 42 } },
        },
      ]);
      const store = await openStore(`sqlite:${db}`);
      const viewer = await startViewer({ store });
      try {
        const response = await fetch(new URL("/api/sessions/s", viewer.url));
        const { nextSteps, ...viewed } = (await response.json()) as Record<string, unknown>;
        // The viewer's run tree is the slimmer one its page draws: what it says of the calls in
        // flight is inspect's, word for word, and so is every run's and attempt's status.
        expect(viewed).toMatchObject({
          sessionId: inspection.sessionId,
          eventCount: inspection.eventCount,
          unresolved: inspection.unresolved,
        });
        expect(statusTree(viewed.runs as StatusTreeRuns)).toEqual(statusTree(inspection.runs));
        // And what to do next, as inspect prints it.
        expect(nextSteps).toEqual([
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" -- s ${inspection.unresolved[0].attemptId}`,
          },
        ]);
        // inspect --json gives it too, naming the store it was given.
        expect(printed).toEqual([
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- s ${inspection.unresolved[0].attemptId}`,
          },
        ]);
      } finally {
        await viewer.close();
        await store.close();
      }
      const reason = "the shop owner checked the order log";
      const { attemptId } = inspection.unresolved[0];
      const resolved = await agentLedger(db, "resolve", "s", attemptId, `--${decision}`, reason);
      expect(resolved.code).toBe(0);

      // The resume does what was decided, without asking again.
      const { decisions, ...outcome } = await runToEnd(["resume", db, dir, "s", "r", "decided"]);
      expect(decisions).toEqual([]);
      if (decision === "approve") {
        expect(outcome).toEqual(expected.outcome);
        expect(lines(join(dir, "orders.log"))).toEqual(expected.orders);
      } else {
        // Abandoned: no order, and the model is told the person's reason.
        expect(outcome).toEqual({ status: "completed", finalOutput: `Receipt: ${reason}` });
        expect(lines(join(dir, "orders.log"))).toEqual([]);
      }
      const calls = lines(join(dir, "model-calls.log"));
      expect(calls.filter((line) => line === "done")).toHaveLength(expected.completedCalls);
      expect(lines(join(dir, "warehouse.log"))).toEqual(expected.notified);
      expect(await unresolvedCount(db, "s")).toBe(0);
    });
  }
});
