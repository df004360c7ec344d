import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin } from "./session-fixture.test.data.js";

// A fork copies a prefix of a run with the same attemptIds (a copy keeps its steps and
// attempts). A call in flight at the fork point is then the same attemptId in two runs: when
// the original run completes it after the fork, only the fork's copy is still unresolved.
describe("agent-ledger on a session with a fork", () => {
  const file = join(scratchDirectory("agent-ledger-fork-", { beforeAll, afterAll }), "ledger.db");
  const storeUrl = `sqlite:${file}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);
  const sessionId = "forked-session";
  let chargeAttemptId = "";
  const crashedSessionId = "forked-crash";
  let payAttemptId = "";

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    try {
      const recorder = new SessionRecorder({
        store,
        sessionId,
        runId: "main",
        actor: { type: "agent", id: "shopper" },
      });
      await recorder.startRun();
      const model = await recorder.beforeModelCall({ request: { model: "m1", messages: [] } });
      await recorder.modelCompleted(model, { text: "charge it" });
      const charge = await recorder.beforeToolCall({
        toolCallId: "call-1",
        name: "charge",
        args: { amount: 5 },
        effect: { kind: "write", idempotent: false },
      });
      chargeAttemptId = charge.attemptId;
      await store.fork({ sessionId, runId: "main", newRunId: "branch", uptoSeq: 4 });
      await recorder.toolCompleted(charge, { charged: true });
      await recorder.completeRun({ done: true });

      // A crashed run forked while its call was in flight: both copies are unresolved.
      const crashed = new SessionRecorder({
        store,
        sessionId: crashedSessionId,
        runId: "main",
        actor: { type: "agent", id: "shopper" },
      });
      await crashed.startRun();
      const pay = await crashed.beforeToolCall({ toolCallId: "call-9", name: "pay", args: {} });
      payAttemptId = pay.attemptId;
      await store.fork({
        sessionId: crashedSessionId,
        runId: "main",
        newRunId: "branch",
        uptoSeq: 2,
      });
    } finally {
      await store.close();
    }
  });

  it("inspect says the fork's copy is in flight and the original completed", async () => {
    const json = await cli("inspect", sessionId, "--json");
    expect(json.code).toBe(0);
    const inspection = JSON.parse(json.stdout);
    const run = (runId: string) =>
      inspection.runs.find((candidate: { runId: string }) => candidate.runId === runId);
    expect(run("main").steps[1].attempts[0]).toMatchObject({
      attemptId: chargeAttemptId,
      status: "completed",
      outcome: { charged: true },
    });
    expect(run("branch").steps[1].attempts[0]).toMatchObject({
      attemptId: chargeAttemptId,
      status: "requested",
    });
    expect(inspection.unresolved).toHaveLength(1);
    expect(inspection.unresolved[0]).toMatchObject({ runId: "branch", requestSeq: 3 });

    const text = (await cli("inspect", sessionId)).stdout;
    expect(text).toMatch(/tool charge \[call-1\] {2}completed/);
    expect(text.match(/tool charge \[call-1\] {2}!! UNRESOLVED/g)).toHaveLength(1);
    expect(text).toContain(`run branch seq 3  attempt ${chargeAttemptId}`);
  });

  it("export marks only the fork's span and step unresolved", async () => {
    const otlp = JSON.parse((await cli("export", sessionId, "--format", "otlp-json")).stdout);
    const spans = otlp.resourceSpans[0].scopeSpans[0].spans as {
      name: string;
      attributes: { key: string; value: { stringValue?: string } }[];
    }[];
    const attribute = (span: (typeof spans)[number], key: string) =>
      span.attributes.find((entry) => entry.key === key)?.value.stringValue;
    const charges = spans
      .filter((span) => span.name === "execute_tool charge")
      .map((span) => [
        attribute(span, "agent_ledger.run.id"),
        attribute(span, "agent_ledger.attempt.status"),
      ])
      .sort();
    expect(charges).toEqual([
      ["branch", "unresolved"],
      ["main", "completed"],
    ]);

    const atif = JSON.parse((await cli("export", sessionId, "--format", "atif")).stdout);
    expect(atif.trajectory_id).toBe("main");
    expect(atif.extra.unresolved_attempts).toEqual([]);
    const calls = atif.steps.flatMap(
      (step: { tool_calls?: { extra: { status: string } }[] }) => step.tool_calls ?? [],
    );
    expect(calls).toHaveLength(1);
    expect(calls[0].extra.status).toBe("completed");
    const branch = atif.subagent_trajectories.find(
      (trajectory: { trajectory_id: string }) => trajectory.trajectory_id === "branch",
    );
    expect(branch.extra.unresolved_attempts).toEqual([chargeAttemptId]);
  });

  it("resolve finds the unresolved copy of a forked attempt", async () => {
    const result = await cli("resolve", sessionId, chargeAttemptId, "--abandon", "refunded");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("on run branch");
    const inspection = JSON.parse((await cli("inspect", sessionId, "--json")).stdout);
    expect(inspection.unresolved).toEqual([]);
  });

  it("resolve asks for --run when every copy is unresolved, and inspect prints it", async () => {
    const text = (await cli("inspect", crashedSessionId)).stdout;
    expect(text).toContain(
      `agent-ledger resolve --abandon "reason" --run=main --store ${storeUrl} -- ${crashedSessionId} ${payAttemptId}`,
    );
    const ambiguous = await cli("resolve", crashedSessionId, payAttemptId, "--abandon", "x");
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain("in runs main, branch: pass --run <runId>");
    const unknownRun = await cli(
      "resolve",
      crashedSessionId,
      payAttemptId,
      "--run",
      "nope",
      "--abandon",
      "x",
    );
    expect(unknownRun.code).toBe(3);
    const result = await cli(
      "resolve",
      crashedSessionId,
      payAttemptId,
      "--run",
      "branch",
      "--abandon",
      "not paid",
      "--json",
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ runId: "branch", type: "attempt.abandoned" });
    const inspection = JSON.parse((await cli("inspect", crashedSessionId, "--json")).stdout);
    expect(inspection.unresolved).toMatchObject([{ runId: "main", attemptId: payAttemptId }]);
    // One copy left: the hint no longer needs --run.
    expect((await cli("inspect", crashedSessionId)).stdout).toContain(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- ${crashedSessionId} ${payAttemptId}`,
    );
  });
});
