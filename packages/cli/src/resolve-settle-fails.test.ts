import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  openStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { EXIT_CODES } from "./errors.js";
import { runBin } from "./session-fixture.test.data.js";

const agent = { type: "agent" as const, id: "assistant" };
const REASON = "sent the research to the client by hand";
const INSIDE = `its tool call research (call_0) was abandoned: ${REASON}`;

/**
 * Session "incident" in a new SQLite file, as a crashed agent leaves it: tool call research
 * (call_0, no effect declared) unresolved on run "agent", inside it two child runs, "first"
 * and "second" (started in that order, each caused by research's request), each with a model
 * call and a tool call that writes (not idempotent) in flight. `refuse()` adds a trigger that
 * makes SQLite refuse every row of run "second" ("disk says no"); `allow()` drops it.
 */
async function incident() {
  const path = join(scratchDirectory("agent-ledger-settle-fails-", onTestFinished), "ledger.db");
  const store: EventStore = await openStore(`sqlite:${path}`);
  const root = new SessionRecorder({ store, sessionId: "incident", runId: "agent", actor: agent });
  await root.startRun();
  const research = await root.beforeToolCall({ toolCallId: "call_0", name: "research", args: {} });
  const inFlight = async (runId: string, tool: string) => {
    const run = root.child({ runId, actor: agent, causedByEventId: research.requestedEventId });
    await run.startRun();
    const model = await run.beforeModelCall({ request: { q: runId } });
    const write = await run.beforeToolCall({
      toolCallId: `${runId}_0`,
      name: tool,
      args: {},
      effect: { kind: "write", idempotent: false },
    });
    return [model.attemptId, write.attemptId];
  };
  const first = await inFlight("first", "charge");
  const second = await inFlight("second", "email");
  await store.close();
  const sqlite = (sql: string) => {
    const database = new Database(path);
    try {
      database.exec(sql);
    } finally {
      database.close();
    }
  };
  const ledger = async () => {
    const again = await openStore(`sqlite:${path}`);
    try {
      const inspection = await inspectSession(again, "incident", { resolve: false });
      const [agentRun] = inspection.runs;
      const runs = new Map(agentRun?.children.map((run) => [run.runId, run]));
      return {
        inspection,
        research: agentRun?.steps.flatMap((step) => step.attempts)[0],
        first: runs.get("first"),
        second: runs.get("second"),
        secondEvents: await readWholeRun(again, { sessionId: "incident", runId: "second" }),
      };
    } finally {
      await again.close();
    }
  };
  const resolve = (...extra: string[]) =>
    runBin([
      "--store",
      `sqlite:${path}`,
      "resolve",
      "incident",
      research.attemptId,
      "--abandon",
      REASON,
      ...extra,
    ]);
  return {
    research: research.attemptId,
    first,
    second,
    ledger,
    resolve,
    cli: (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]),
    refuse: () =>
      sqlite(
        "CREATE TRIGGER refuse_second BEFORE INSERT ON events WHEN NEW.run_id = 'second' BEGIN SELECT RAISE(ABORT, 'disk says no'); END",
      ),
    allow: () => sqlite("DROP TRIGGER refuse_second"),
  };
}

const failure = (research: string) =>
  `agent-ledger: attempt ${research} is abandoned, but the calls in flight inside it could not all be settled: sqlite append failed: disk says no\n  run the same command again to finish (the next resume of the agent does it too)\n`;

/** The ledger after a resolve whose settle SQLite refused on run "second". */
async function expectStoppedAtSecond(world: Awaited<ReturnType<typeof incident>>) {
  const { inspection, research, first, second, secondEvents } = await world.ledger();
  expect(research).toMatchObject({ attemptId: world.research, status: "abandoned" });
  expect(research?.outcome).toBe(REASON);
  // The first child run: both calls abandoned with the tool call's reason, the run cancelled.
  expect(first?.status).toBe("cancelled");
  expect(first?.result).toEqual({ reason: REASON });
  const firstAttempts = first?.steps.flatMap((step) => step.attempts) ?? [];
  expect(firstAttempts.map((attempt) => [attempt.attemptId, attempt.status])).toEqual(
    world.first.map((attemptId) => [attemptId, "abandoned"]),
  );
  for (const attempt of firstAttempts) expect(attempt.outcome).toBe(INSIDE);
  // The second: as it was recorded (started, two requests), its calls still unresolved.
  expect(second?.status).toBe("running");
  expect(secondEvents.map((event) => event.type)).toEqual([
    "run.started",
    "model.requested",
    "tool.requested",
  ]);
  expect(inspection.unresolved.map((attempt) => [attempt.runId, attempt.attemptId])).toEqual(
    world.second.map((attemptId) => ["second", attemptId]),
  );
}

describe("resolve --abandon of a tool call whose calls inside the store refuses part way", () => {
  it("prints the decision, fails with exit 4 and the hint; the first child run is settled, the second untouched", async () => {
    const world = await incident();
    world.refuse();
    const result = await world.resolve();
    // A driver error the SQLite store does not know is store-unavailable: exit 4.
    expect(result.code).toBe(EXIT_CODES.unreachable);
    expect(result.stdout).toMatch(
      new RegExp(
        `^abandoned attempt ${world.research} \\(tool research\\) on run agent at seq \\d+: ${REASON}\n$`,
      ),
    );
    expect(result.stderr).toBe(failure(world.research));
    await expectStoppedAtSecond(world);

    // Run again while the store still refuses: the same error, nothing on stdout, nothing written.
    const before = (await world.ledger()).inspection.eventCount;
    const again = await world.resolve();
    expect(again).toEqual({
      code: EXIT_CODES.unreachable,
      stdout: "",
      stderr: failure(world.research),
    });
    expect((await world.ledger()).inspection.eventCount).toBe(before);
  });

  it("--json: prints the decision's event as JSON, then fails the same way", async () => {
    const world = await incident();
    world.refuse();
    const result = await world.resolve("--json");
    expect(result.code).toBe(EXIT_CODES.unreachable);
    const event = JSON.parse(result.stdout);
    expect(event).toMatchObject({
      type: "attempt.abandoned",
      sessionId: "incident",
      runId: "agent",
      attemptId: world.research,
      actor: { type: "human" },
      payload: { reason: REASON },
    });
    expect(result.stderr).toBe(failure(world.research));
    await expectStoppedAtSecond(world);
  });

  it("run again once the store takes writes: settles the second child run; then nothing is left", async () => {
    const world = await incident();
    world.refuse();
    expect((await world.resolve()).code).toBe(EXIT_CODES.unreachable);
    world.allow();

    const finished = await world.resolve();
    expect(finished).toEqual({
      code: 0,
      stdout: [
        `attempt ${world.research} (tool research) on run agent was abandoned already: ${REASON}`,
        "and what it left in flight inside it:",
        `  run second: abandoned attempts ${world.second[0]} (model), ${world.second[1]} (tool email); cancelled`,
        "",
      ].join("\n"),
      stderr: "",
    });
    const { inspection, second } = await world.ledger();
    expect(inspection.unresolved).toEqual([]);
    expect(second?.status).toBe("cancelled");
    expect(second?.result).toEqual({ reason: REASON });
    for (const attempt of second?.steps.flatMap((step) => step.attempts) ?? [])
      expect([attempt.status, attempt.outcome]).toEqual(["abandoned", INSIDE]);
    const inspected = await world.cli("inspect", "incident");
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain("0 unresolved");
    // The runs the call made are listed in the order they started, as the viewer lists them.
    expect(inspected.stdout.indexOf("(first)")).toBeGreaterThan(0);
    expect(inspected.stdout.indexOf("(first)")).toBeLessThan(inspected.stdout.indexOf("(second)"));

    // A third time (the hint followed after a resume had finished the work): what was asked
    // for holds, so it is no failure in a runbook; it says so, and writes nothing.
    const third = await world.resolve();
    expect(third).toEqual({
      code: 0,
      stdout: `attempt ${world.research} (tool research) on run agent was abandoned already: ${REASON}; nothing it started is left in flight\n`,
      stderr: "",
    });
    expect((await world.ledger()).inspection.eventCount).toBe(inspection.eventCount);
    // With --json, the abandonment as the ledger holds it.
    const json = await world.resolve("--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      type: "attempt.abandoned",
      attemptId: world.research,
      payload: { reason: REASON },
    });
    expect((await world.ledger()).inspection.eventCount).toBe(inspection.eventCount);
  });
});
