import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { runBin, runPasted, storeWithSecret } from "../session-fixture.test.data.js";

describe("agent-ledger resolve", () => {
  it("names a model call whose model the ledger does not know as 'model', with no stray space", async () => {
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

    const result = await runBin([
      "--store",
      `sqlite:${path}`,
      "resolve",
      "cut",
      call.attemptId,
      "--abandon",
      "provider outage",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `abandoned attempt ${call.attemptId} (model) on run run at seq 2: provider outage\n`,
    );
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

describe("the reason of resolve", () => {
  it("is refused when it is the placeholder inspect prints, pasted as is: nothing is written", async () => {
    const path = join(scratchDirectory("agent-ledger-placeholder-", onTestFinished), "ledger.db");
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
    expect(help.stdout).toContain("with the reason word for word as");
    expect(help.stdout).toContain("the call's result");
    const { url, attemptId } = await storeWithSecret();
    const text = await runBin(["inspect", "pay"], { AGENT_LEDGER_STORE: url });
    expect(text.stdout).toContain(
      `check the effect, then: agent-ledger resolve --abandon "reason" -- pay ${attemptId}\n       replace "reason" with what you found: the agent's model reads it word for word as the call's result; if the call did not take effect, --approve "reason" instead makes it again on the next resume\n`,
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
