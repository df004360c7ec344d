import { join } from "node:path";
import { type EventStore, inspectSession, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { shellQuote } from "./format.js";
import { runBin, runPasted } from "./session-fixture.test.data.js";

const agent = { type: "agent" as const, id: "assistant" };

/**
 * Session "crashed" in a new SQLite file: tool call research (call_0) on run "agent", with a
 * model call and a tool call charge (c0) in flight on its child run "inside"; research then
 * abandoned by a person whose resolve died before it settled them, or completed by its agent.
 */
async function endedWithCallsInside(end: "abandoned" | "completed") {
  const path = join(scratchDirectory("agent-ledger-settled-", onTestFinished), "ledger.db");
  const store: EventStore = await openStore(`sqlite:${path}`);
  const root = new SessionRecorder({ store, sessionId: "crashed", runId: "agent", actor: agent });
  await root.startRun();
  const research = await root.beforeToolCall({ toolCallId: "call_0", name: "research", args: {} });
  const inside = root.child({
    runId: "inside",
    actor: agent,
    causedByEventId: research.requestedEventId,
  });
  await inside.startRun();
  const plan = await inside.beforeModelCall({ request: { q: "plan" } });
  const charge = await inside.beforeToolCall({
    toolCallId: "c0",
    name: "charge",
    args: { cents: 700 },
    effect: { kind: "write", idempotent: false },
  });
  if (end === "abandoned") {
    const person = await SessionRecorder.resume({
      resolve: false,
      store,
      sessionId: "crashed",
      runId: "agent",
      actor: { type: "human", id: "ops" },
    });
    await person.abandon(research, "filed by hand");
  } else await root.toolCompleted(research, "ok");
  await store.close();
  const cli = (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]);
  const eventCount = async () => {
    const again = await openStore(`sqlite:${path}`);
    try {
      return (await inspectSession(again, "crashed", { resolve: false })).eventCount;
    } finally {
      await again.close();
    }
  };
  return { path, cli, eventCount, research, plan, charge, store: shellQuote(`sqlite:${path}`) };
}

describe("calls in flight inside a tool call that ended", () => {
  it("abandoned: inspect says its tool call settles them and prints the command that does it now", async () => {
    const { cli, research, store } = await endedWithCallsInside("abandoned");
    const inspected = await cli("inspect", "crashed");
    expect(inspected.code).toBe(0);
    const command = `agent-ledger resolve --abandon 'filed by hand' --run=agent --store ${store} -- crashed ${research.attemptId}`;
    const said = `next: nothing to decide: settled with its tool call research (call_0), which was abandoned: run ${command} again to settle it now, or the next resume does`;
    expect(inspected.stdout.split("\n").filter((line) => line.trim() === said)).toHaveLength(2);
    expect(inspected.stdout).not.toContain("check the effect");
    expect(inspected.stdout).not.toContain("makes this model call again by itself");

    const json = JSON.parse((await cli("inspect", "crashed", "--json")).stdout);
    expect(json.nextSteps).toEqual([
      expect.objectContaining({ action: "settled-with-outer", ended: "abandoned", command }),
      expect.objectContaining({ action: "settled-with-outer", ended: "abandoned", command }),
    ]);

    // The command, pasted, settles them.
    const pasted = await runPasted(command);
    expect(pasted.code).toBe(0);
    expect(pasted.stdout).toContain("run inside: abandoned attempts");
    expect((await cli("inspect", "crashed")).stdout).toContain("0 unresolved");
  });

  it("completed: inspect says the next resume settles them, with nothing to decide", async () => {
    const { cli } = await endedWithCallsInside("completed");
    const inspected = await cli("inspect", "crashed");
    const said =
      "next: nothing to decide: settled with its tool call research (call_0), which completed: the next resume settles it (abandons it: its answer was never recorded)";
    expect(inspected.stdout.split("\n").filter((line) => line.trim() === said)).toHaveLength(2);
    expect(inspected.stdout).not.toContain("check the effect");
    expect(inspected.stdout).not.toContain("makes this model call again by itself");
  });

  for (const end of ["abandoned", "completed"] as const)
    it(`${end}: resolve on a call inside it is refused, naming the tool call; nothing is written`, async () => {
      const { cli, eventCount, research, plan, charge, store } = await endedWithCallsInside(end);
      const before = await eventCount();
      for (const call of [plan, charge])
        for (const decision of ["--approve", "--abandon"]) {
          const result = await cli("resolve", "crashed", call.attemptId, decision, "checked");
          expect(result.code).toBe(2);
          expect(result.stderr).toContain(
            `attempt ${call.attemptId} is in flight inside tool call research (call_0) (attempt ${research.attemptId} on run agent), which ${end === "abandoned" ? "was abandoned" : "completed"}`,
          );
          expect(result.stderr).toContain(
            end === "abandoned"
              ? `run agent-ledger resolve --abandon 'filed by hand' --run=agent --store ${store} -- crashed ${research.attemptId} again`
              : "the next resume of its agent settles it",
          );
        }
      expect(await eventCount()).toBe(before);
    });
});
