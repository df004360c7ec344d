import { join } from "node:path";
import { type AttemptView, inspectSession, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { runBin, runPasted, storeWithPay } from "../session-fixture.test.data.js";

describe("agent-ledger resolve", () => {
  it("refuses a model call, naming it 'model' with no stray space: the next resume makes it again, nothing is written", async () => {
    const path = join(scratchDirectory("agent-ledger-resolve-", onTestFinished), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "cut",
      runId: "run",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: { input: "hi" } });
    await store.close();

    for (const decision of ["--abandon", "--approve"]) {
      const result = await runBin([
        "--store",
        `sqlite:${path}`,
        "resolve",
        "cut",
        call.attemptId,
        decision,
        "provider outage",
      ]);
      // Abandoned, every resume of the run stopped at the call: its agent had no answer.
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(
        `attempt ${call.attemptId} (model) on run run is not decided by a person: nothing to decide; the next resume makes this model call again by itself. Nothing written.`,
      );
      expect(result.stderr).toContain(`agent-ledger inspect --store sqlite:${path} -- cut`);
    }
    const reopened = await openStore(`sqlite:${path}`);
    onTestFinished(() => reopened.close());
    const { unresolved } = await inspectSession(reopened, "cut");
    expect(unresolved.map((attempt) => [attempt.attemptId, attempt.status])).toEqual([
      [call.attemptId, "requested"],
    ]);
  });

  it("shows a tool name holding terminal escapes as escapes", async () => {
    // A model names the tool it calls: an OSC sequence in it set the terminal's title.
    const path = join(scratchDirectory("agent-ledger-resolve-", onTestFinished), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "named",
      runId: "run",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ name: "pay\u001b]0;owned\u0007", args: {} });
    await store.close();

    const args = ["--store", `sqlite:${path}`, "resolve", "named", call.attemptId];
    const result = await runBin([...args, "--abandon", "checked"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `abandoned attempt ${call.attemptId} (tool pay\\u001b]0;owned\\u0007) on run run at seq 2: checked\n`,
    );
  });
});

/**
 * A SQLite ledger whose session "pay" holds the tool call `pay` in flight on run "run", and the
 * CLI on it; `call` is the attempt.
 */
async function payInFlight() {
  const path = join(scratchDirectory("agent-ledger-pay-", onTestFinished), "ledger.db");
  const store = await openStore(`sqlite:${path}`);
  const recorder = new SessionRecorder({
    store,
    sessionId: "pay",
    runId: "run",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
  await store.close();
  const cli = (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]);
  return { path, call, cli };
}

describe("the reason of resolve", () => {
  it("is refused when it is the placeholder inspect prints, pasted as is: nothing is written", async () => {
    const { call, cli } = await payInFlight();
    const command = /check the effect, then: (agent-ledger resolve .*)/.exec(
      (await cli("inspect", "pay")).stdout,
    )?.[1];
    expect(command).toBeDefined();

    for (const decision of ["--abandon", "--approve"]) {
      const pasted = await runPasted((command as string).replace("--abandon", decision));
      expect(pasted.code).toBe(2);
      expect(pasted.stderr).toContain(
        `${decision} "reason" is the placeholder inspect prints: replace it with what you found`,
      );
    }
    const inspection = JSON.parse((await cli("inspect", "pay", "--json")).stdout);
    expect(inspection.eventCount).toBe(2);
    expect(
      inspection.unresolved.map((attempt: { attemptId: string }) => attempt.attemptId),
    ).toEqual([call.attemptId]);
  });

  it("is, for --abandon, what the agent's model reads: inspect and the help say so", async () => {
    const help = await runBin(["help", "resolve"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("the call's result it reads holds");
    expect(help.stdout).toContain("the reason word for word");
    const { url, attemptId } = await storeWithPay();
    const text = await runBin(["inspect", "pay"], { AGENT_LEDGER_STORE: url });
    expect(text.stdout).toContain(
      `check the effect, then: agent-ledger resolve --abandon "reason" -- pay ${attemptId}\n       replace "reason" with what you found: the agent's model reads it word for word in the call's result; if the call did not take effect, --approve "reason" instead makes it again on the next resume\n`,
    );
  });
});

describe("the resolve command inspect prints, for ids that start with '-'", () => {
  it("runs pasted into bash: options first, the ids after '--'", async () => {
    const path = join(scratchDirectory("agent-ledger-dash-", onTestFinished), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    // A session "-rf" on a run "--json", forked into "-r" so the command must name the run.
    const recorder = new SessionRecorder({
      store,
      sessionId: "-rf",
      runId: "--json",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
    await store.fork({ sessionId: "-rf", runId: "--json", newRunId: "-r", uptoSeq: 2 });
    // A session "--help" whose attempt id starts with "-" too (a writer may choose its ids).
    await store.append({
      sessionId: "--help",
      runId: "run",
      expectedSeq: 0,
      events: [
        { type: "run.started", payload: {} },
        {
          type: "tool.requested",
          stepId: "step",
          attemptId: "-x",
          payload: { toolCallId: "c1", name: "pay", args: {} },
        },
      ],
    });
    await store.close();
    const cli = (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]);
    const printed = async (sessionId: string) => {
      const result = await cli("inspect", "--", sessionId);
      expect(result.code, result.stderr).toBe(0);
      const command = /check the effect, then: (agent-ledger resolve .*)/.exec(result.stdout)?.[1];
      expect(command).toBeDefined();
      return (command as string).replace('"reason"', '"checked"');
    };

    // As a person on call would: paste what inspect printed, reason filled in.
    const first = await printed("-rf");
    const pasted = await runPasted(first);
    expect(pasted.stderr).toBe("");
    expect(pasted.code).toBe(0);
    expect(pasted.stdout).toContain(`abandoned attempt ${call.attemptId} (tool pay) on run --json`);
    expect(first).toBe(
      `agent-ledger resolve --abandon "checked" --run=--json --store sqlite:${path} -- -rf ${call.attemptId}`,
    );
    // The copy in the fork is left, and its command (no --run now) runs too.
    expect((await runPasted(await printed("-rf"))).code).toBe(0);

    // A session named "--help" is resolved, not helped.
    const help = await printed("--help");
    const resolved = await runPasted(help);
    expect(resolved.stdout).toBe("abandoned attempt -x (tool pay) on run run at seq 2: checked\n");
    expect(resolved.code).toBe(0);
    expect(help).toBe(
      `agent-ledger resolve --abandon "checked" --store sqlite:${path} -- --help -x`,
    );
    const after = JSON.parse((await cli("inspect", "--json", "--", "--help")).stdout);
    expect(after.unresolved).toEqual([]);
  });
});

/**
 * A crashed agent's session: on run "agent", research (call_0) was tried, retried, and is still
 * in flight; the runs made inside it (caused by its first attempt) hold a model call and a
 * sub-agent's tool call lookup (l1) in flight, and lookup's own run a model call. Next to it,
 * send (call_1) is in flight too, with a model call in flight in the run made inside it.
 */
async function recordCallsInside(path: string) {
  const store = await openStore(`sqlite:${path}`);
  const actor = { type: "agent" as const, id: "assistant" };
  const agent = new SessionRecorder({ store, sessionId: "crashed", runId: "agent", actor });
  await agent.startRun();
  const first = await agent.beforeToolCall({ toolCallId: "call_0", name: "research", args: {} });
  const research = await agent.retry(first);
  const inside = agent.child({ runId: "inside", actor, causedByEventId: first.requestedEventId });
  await inside.startRun();
  const answered = await inside.beforeModelCall({ request: { prompt: "outline" } });
  await inside.modelCompleted(answered, { text: "outline" });
  const model = await inside.beforeModelCall({ request: { prompt: "details" } });
  const lookup = await inside.beforeToolCall({ toolCallId: "l1", name: "lookup", args: {} });
  const deeper = inside.child({ runId: "deeper", actor, causedByEventId: lookup.requestedEventId });
  await deeper.startRun();
  const deepest = await deeper.beforeModelCall({ request: { prompt: "inside lookup" } });
  const send = await agent.beforeToolCall({ toolCallId: "call_1", name: "send", args: {} });
  const sending = agent.child({ runId: "sending", actor, causedByEventId: send.requestedEventId });
  await sending.startRun();
  const draft = await sending.beforeModelCall({ request: { prompt: "draft" } });
  await store.close();
  return { research, model, lookup, deepest, send, draft };
}

/** `agent-ledger --store sqlite:<path> ...args` and the session's events, run by run. */
function ledgerCli(path: string) {
  const cli = (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]);
  const runs = async () => {
    const events = (await cli("export", "crashed")).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const of = (runId: string) => events.filter((event) => event.runId === runId);
    return { of, types: (runId: string) => of(runId).map((event) => event.type) };
  };
  const unresolved = async () =>
    JSON.parse((await cli("inspect", "crashed", "--json")).stdout).unresolved.map(
      (attempt: { attemptId: string }) => attempt.attemptId,
    );
  return { cli, runs, unresolved };
}

describe("resolve --abandon of a tool call with calls in flight inside it", () => {
  it("abandons them at once, depth first, and cancels the runs they were on, with the reason", async () => {
    const path = join(scratchDirectory("agent-ledger-inside-", onTestFinished), "ledger.db");
    const calls = await recordCallsInside(path);
    const { cli, runs, unresolved } = ledgerCli(path);
    const reason = "the research was filed by hand";

    const result = await cli("resolve", "crashed", calls.research.attemptId, "--abandon", reason);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const inResearch = `its tool call research (call_0) was abandoned: ${reason}`;
    expect(result.stdout).toBe(
      [
        `abandoned attempt ${calls.research.attemptId} (tool research) on run agent at seq 4: ${reason}`,
        "and what it left in flight inside it:",
        `  run inside: abandoned attempts ${calls.model.attemptId} (model), ${calls.lookup.attemptId} (tool lookup); cancelled`,
        `  run deeper: abandoned attempt ${calls.deepest.attemptId} (model); cancelled`,
        "",
      ].join("\n"),
    );
    // Only send and the call inside it are left for the next resume, or for a person.
    expect(await unresolved()).toEqual([calls.send.attemptId, calls.draft.attemptId]);

    const { of, types } = await runs();
    expect(types("inside")).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "model.requested",
      "tool.requested",
      "attempt.abandoned",
      "attempt.abandoned",
      "run.cancelled",
    ]);
    expect(types("deeper")).toEqual([
      "run.started",
      "model.requested",
      "attempt.abandoned",
      "run.cancelled",
    ]);
    const [model, lookup, insideEnd] = of("inside").slice(5);
    const [deepest, deeperEnd] = of("deeper").slice(2);
    expect([model.attemptId, model.payload.reason]).toEqual([calls.model.attemptId, inResearch]);
    expect([lookup.attemptId, lookup.payload]).toEqual([
      calls.lookup.attemptId,
      { reason: inResearch, toolCallId: "l1" },
    ]);
    expect(deepest.payload.reason).toBe(`its tool call lookup (l1) was abandoned: ${inResearch}`);
    // Each run is cancelled with the reason its tool call was abandoned with.
    expect(insideEnd.payload).toEqual({ reason });
    expect(deeperEnd.payload).toEqual({ reason: inResearch });
    for (const event of [model, lookup, insideEnd, deepest, deeperEnd])
      expect(event.actor.type).toBe("human");
    expect(types("sending")).toEqual(["run.started", "model.requested"]);
  });

  it("--approve leaves them as they are: the call runs again as a whole; the help says so", async () => {
    const path = join(scratchDirectory("agent-ledger-inside-", onTestFinished), "ledger.db");
    const calls = await recordCallsInside(path);
    const { cli, runs, unresolved } = ledgerCli(path);
    const before = await unresolved();
    const result = await cli("resolve", "crashed", calls.research.attemptId, "--approve", "redo");
    expect(result.code).toBe(0);
    expect(await unresolved()).toEqual(before);
    expect((await runs()).types("inside").at(-1)).toBe("tool.requested");

    const help = (await runBin(["help", "resolve"])).stdout;
    expect(help).toContain("the calls it left in flight inside it (in the runs made inside");
    expect(help).toContain("--approve does not touch the calls inside it");
  });

  it("run again on a call abandoned without them (a resolve killed part way), settles them with its reason", async () => {
    const path = join(scratchDirectory("agent-ledger-inside-", onTestFinished), "ledger.db");
    const calls = await recordCallsInside(path);
    // The outer abandonment alone, as a resolve killed right after it, or an older one, left it.
    const store = await openStore(`sqlite:${path}`);
    const person = await SessionRecorder.resume({
      store,
      sessionId: "crashed",
      runId: "agent",
      actor: { type: "human", id: "ops" },
    });
    const [research] = (await inspectSession(store, "crashed")).unresolved;
    await person.abandon(research as AttemptView, "filed by hand");
    await store.close();
    const { cli, runs, unresolved } = ledgerCli(path);

    const result = await cli("resolve", "crashed", calls.research.attemptId, "--abandon", "other");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe(
      `attempt ${calls.research.attemptId} (tool research) on run agent was abandoned already: filed by hand`,
    );
    expect(await unresolved()).toEqual([calls.send.attemptId, calls.draft.attemptId]);
    const { of } = await runs();
    expect(of("inside").at(-1).payload).toEqual({ reason: "filed by hand" });

    // Nothing is left inside it now: what was asked for holds, so it says so and writes nothing.
    const length = (await runs()).of("agent").length;
    const again = await cli("resolve", "crashed", calls.research.attemptId, "--abandon", "other");
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `attempt ${calls.research.attemptId} (tool research) on run agent was abandoned already: filed by hand; nothing it started is left in flight\n`,
    );
    expect((await runs()).of("agent")).toHaveLength(length);
  });
});

describe("resolve on a call a person approved already", () => {
  async function approvedCall() {
    const { path, call, cli } = await payInFlight();
    const first = await cli(
      "resolve",
      "--approve",
      "checked: safe",
      "--actor",
      "alice",
      "--",
      "pay",
      call.attemptId,
    );
    expect(first.code, first.stderr).toBe(0);
    const events = async () => {
      const reader = await openStore(`sqlite:${path}`);
      const { events } = await reader.readSession({ sessionId: "pay" });
      await reader.close();
      return events.map((event) => event.type);
    };
    return { cli, attemptId: call.attemptId, events };
  }

  it("--approve again writes no second approval and says whose stands", async () => {
    const { cli, attemptId, events } = await approvedCall();
    const before = await events();
    const again = await cli(
      "resolve",
      "--approve",
      "checked: safe again",
      "--actor",
      "bob",
      "--",
      "pay",
      attemptId,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("approved already by alice");
    expect(again.stdout).toContain("nothing written");
    expect(await events()).toEqual(before);
    const json = await cli("resolve", "--approve", "x", "--json", "--", "pay", attemptId);
    expect(JSON.parse(json.stdout)).toMatchObject({
      attemptId,
      approvedBy: "alice",
      written: false,
    });
  });

  it("--abandon after an approval abandons it, and says which approval it overrides", async () => {
    const { cli, attemptId } = await approvedCall();
    const abandoned = await cli(
      "resolve",
      "--abandon",
      "checked: never mind",
      "--",
      "pay",
      attemptId,
    );
    expect(abandoned.code, abandoned.stderr).toBe(0);
    expect(abandoned.stdout).toContain("abandoned attempt");
    expect(abandoned.stdout).toContain("instead of alice's approval");
  });
});
