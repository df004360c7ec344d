import type { EventStore } from "@agent-ledger/core";
import { type Agent, type Model, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import type { CrashScenario } from "./testing/crash-scenarios.test.data.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { nestedAgentToolsFixture } from "./testing/nested-agent-tools.js";
import { runOptions } from "./testing/recorded-run.js";
import { agentToolFixture } from "./testing/writer-agent.js";

setTracingDisabled(true);

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts). The person on
// call reads the ledger with the real `agent-ledger inspect`; then the next process resumes it.
const ledgers = new CrashedLedgers("oa-agent-tool-inspect-", { beforeAll, afterAll });
ledgers.prepare(
  "writer as a tool: dies inside write",
  "writer as a tool: dies right after its run started",
  "writer as a tool, model recorded only: dies inside write",
  "writer as a tool, model recorded only: dies right after its run started",
  "writer as a tool, not instrumented: dies inside write",
  "writer as a tool: dies right after its call is requested",
  "nested agent tools: dies inside charge",
  "writer as a tool, partly instrumented: dies inside write",
);

type Step = "none" | "resolve" | "decide-inner-first" | "decide-outer-first" | "awaiting-decision";

/** What `agent-ledger inspect s --json` says to do about each unresolved call, by name, and its text. */
async function inspectSteps(path: string) {
  const json = await agentLedger(path, "inspect", "s", "--json");
  const text = await agentLedger(path, "inspect", "s");
  expect(json.code).toBe(0);
  expect(text.code).toBe(0);
  const inspection = JSON.parse(json.stdout) as {
    unresolved: { name: string }[];
    nextSteps: { action: Step }[];
  };
  const steps = Object.fromEntries(
    inspection.unresolved.map((attempt, index) => [
      attempt.name,
      inspection.nextSteps[index]?.action,
    ]),
  );
  return { steps, text: text.stdout };
}

/** Resumes in a new process, approving every call it asks about; the names asked, in order. */
async function resumeApprovingAll(store: EventStore, main: Agent, model: Model) {
  const asked: string[] = [];
  let result = await resumeRun(main, runOptions(store, model));
  while (result.status === "interrupted") {
    for (const item of result.interruptions) {
      asked.push(item.name ?? "");
      result.state.approve(item);
    }
    result = await resumeRun(main, { ...runOptions(store, model), state: result.state });
  }
  return { asked, result };
}

interface Case {
  scenario: CrashScenario;
  /** The next step inspect gives for each call in flight. */
  steps: Record<string, Step>;
  /** The words inspect prints for the agent tool call. */
  words: string;
  /** The next process: its agents, with the scripts going on after what the ledger answers. */
  next: () => { main: Agent; model: Model; effects: string[] };
  /** What the next process's tools do, all asked calls approved. */
  effects: string[];
}

const WRITE = "write héllo 🌍";
const MADE_AGAIN =
  "next: nothing to decide; its child run records every call it makes, so the next resume makes this call again by itself";
const ASKED =
  "next: what its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it: check the effect, then: agent-ledger resolve";
const INNER_FIRST =
  "next: decide the unresolved call inside its child run first; this call waits on it";

// The writer's fixture in the next process; `answered`: the writer's model calls the ledger holds.
function writer(options: Parameters<typeof agentToolFixture>[0], answered: number) {
  return () => {
    const next = agentToolFixture({ writeNeedsApproval: false, ...options });
    next.model.calls = 1;
    next.writerModel.calls = answered;
    return next;
  };
}

const CASES: Case[] = [
  {
    // The writer is recorded call by call: only the write in flight inside it is a decision.
    scenario: "writer as a tool: dies inside write",
    steps: { writer_tool: "decide-inner-first", write: "resolve" },
    words: INNER_FIRST,
    next: writer({}, 1),
    effects: [WRITE],
  },
  {
    // Its run says it records every call, and nothing ran inside it yet.
    scenario: "writer as a tool: dies right after its run started",
    steps: { writer_tool: "none" },
    words: MADE_AGAIN,
    next: writer({}, 0),
    effects: [WRITE],
  },
  {
    // Its model's calls are recorded, its plain SDK write is not: the write happened unseen.
    scenario: "writer as a tool, model recorded only: dies inside write",
    steps: { writer_tool: "resolve" },
    words: ASKED,
    next: writer({ instrumented: "model only" }, 1),
    effects: [WRITE],
  },
  {
    scenario: "writer as a tool, model recorded only: dies right after its run started",
    steps: { writer_tool: "resolve" },
    words: ASKED,
    next: writer({ instrumented: "model only" }, 0),
    effects: [WRITE],
  },
  {
    // Nothing of the writer is recorded: no child run at all.
    scenario: "writer as a tool, not instrumented: dies inside write",
    steps: { writer_tool: "resolve" },
    words: ASKED,
    next: writer({ instrumented: false }, 0),
    effects: [WRITE],
  },
  {
    // The evidence is missing: no child run says how its writer was to be recorded.
    scenario: "writer as a tool: dies right after its call is requested",
    steps: { writer_tool: "resolve" },
    words: ASKED,
    next: writer({}, 0),
    effects: [WRITE],
  },
  {
    // Its writer records write, but has a plain SDK tool too: the writer_tool call is a decision
    // itself, asked about first (its writer runs again only once it is approved); the write in
    // flight inside it comes up then.
    scenario: "writer as a tool, partly instrumented: dies inside write",
    steps: { writer_tool: "resolve", write: "decide-outer-first" },
    words: ASKED,
    next: writer({ instrumented: "partly" }, 1),
    effects: [WRITE],
  },
  {
    scenario: "nested agent tools: dies inside charge",
    steps: { mid: "decide-inner-first", inner: "decide-inner-first", charge: "resolve" },
    words: INNER_FIRST,
    next: () => {
      const next = nestedAgentToolsFixture();
      next.model.calls = 1;
      next.midModel.calls = 1;
      next.innerModel.calls = 1;
      return { main: next.outer, model: next.model, effects: next.effects };
    },
    effects: ["charge 7"],
  },
];

describe("an agent tool call in flight at a crash: what inspect says is what the resume does", () => {
  for (const { scenario, steps, words, next, effects } of CASES)
    test(scenario, async () => {
      const { store, path } = await ledgers.crashed(scenario);
      const said = await inspectSteps(path);
      expect(said.steps).toEqual(steps);
      expect(said.text).toContain(words);

      const second = next();
      const { asked, result } = await resumeApprovingAll(store, second.main, second.model);
      // The resume asks about exactly the calls inspect gave a resolve command for, then (once
      // approved) those inspect said wait on them; a call inspect said is made again by itself
      // is not asked about.
      const withStep = (step: Step) => Object.keys(steps).filter((name) => steps[name] === step);
      expect(asked).toEqual([...withStep("resolve"), ...withStep("decide-outer-first")]);
      expect(result.status).toBe("completed");
      expect(second.effects).toEqual(effects);
      const after = await inspectSteps(path);
      expect(after.steps).toEqual({});
    });
});

// The next process made writer_tool again by itself (its retry, attempt 2, going on on the child
// run the first attempt started) and died inside the write there. inspect linked the child run
// through the first attempt only: the retry in flight was said to need nothing, while the write
// inside it waited on a person.
describe("an agent tool call made again by itself, in flight again after a second crash", () => {
  test("its retry waits on the call inside its child run, as the resume asks about that call only", async () => {
    const { store, path, first, second } = await ledgers.crashedTwice(
      "writer as a tool: dies right after its run started",
      "writer as a tool, resumed: dies inside write",
    );
    expect(first.effects).toEqual([]);
    expect(second.effects).toEqual([WRITE]);
    const inspection = await inspectJson(path);
    const retry = inspection.unresolved.find((attempt) => attempt.name === "writer_tool") as
      | { retryOf?: string }
      | undefined;
    expect(retry?.retryOf).toEqual(expect.any(String));
    const said = await inspectSteps(path);
    expect(said.steps).toEqual({ writer_tool: "decide-inner-first", write: "resolve" });
    expect(said.text).toContain(INNER_FIRST);

    const third = writer({}, 1)();
    const { asked, result } = await resumeApprovingAll(store, third.main, third.model);
    expect(asked).toEqual(["write"]);
    expect(result.status).toBe("completed");
    expect(third.effects).toEqual([WRITE]);
    expect((await inspectSteps(path)).steps).toEqual({});
  });
});

// A worker resumed the dead run once without a decision: the run paused asking about the call
// in flight. inspect said every call of its tree waited on the app's decision ("nothing to
// resolve"), though each was lost in the crash; the call asked about keeps its resolve command,
// and decided with agent-ledger resolve, the next resume without a state goes on.
describe("an agent tool call in flight at a crash, after a resume that paused asking about it", () => {
  const PAUSED_CASES: { scenario: CrashScenario; abandon: string }[] = [
    {
      scenario: "writer as a tool, partly instrumented: dies inside write",
      abandon: "writer_tool",
    },
    { scenario: "nested agent tools: dies inside charge", abandon: "charge" },
  ];
  for (const { scenario, abandon } of PAUSED_CASES)
    test(scenario, async () => {
      const { store, path } = await ledgers.crashed(scenario);
      const before = (await inspectSteps(path)).steps;
      const [first] = CASES.filter((each) => each.scenario === scenario).map((each) => each.next);
      if (first === undefined) throw new Error(`no case ${scenario}`);
      const worker = first();
      const paused = await resumeRun(worker.main, runOptions(store, worker.model));
      expect(paused.status).toBe("interrupted");
      expect(paused.interruptions.map((item) => item.name)).toEqual([abandon]);
      expect(paused.inFlightAtCrash.map(({ item }) => item.name)).toEqual([abandon]);
      // The call asked about keeps its resolve command; no call is left waiting on the app.
      const after = (await inspectSteps(path)).steps;
      expect(after[abandon]).toBe("resolve");
      expect(before[abandon]).toBe("resolve");
      expect(Object.values(after)).not.toContain("awaiting-decision");

      expect((await resolveCall(path, abandon, "--abandon", "done by hand")).code).toBe(0);
      const next = first();
      const { asked, result } = await resumeApprovingAll(store, next.main, next.model);
      expect(asked).toEqual([]);
      expect(result.status).toBe("completed");
      expect(next.effects).toEqual([]);
      expect((await inspectSteps(path)).steps).toEqual({});
    });
});

/** `agent-ledger inspect s --json`: the unresolved calls and their next steps, as parsed. */
async function inspectJson(path: string) {
  const { code, stdout } = await agentLedger(path, "inspect", "s", "--json");
  expect(code).toBe(0);
  return JSON.parse(stdout) as {
    unresolved: { name: string; attemptId: string }[];
    runs: {
      children: {
        status: string;
        result?: unknown;
        steps: { attempts: { name?: string; status: string; outcome?: unknown }[] }[];
      }[];
    }[];
  };
}

/** The writer's child run as inspect shows it: status, result, and each attempt's outcome. */
async function writerRun(path: string) {
  const [writer] = (await inspectJson(path)).runs[0]?.children ?? [];
  return {
    status: writer?.status,
    result: writer?.result,
    calls: writer?.steps.flatMap((step) =>
      step.attempts.map((attempt) => [attempt.name ?? "model", attempt.status, attempt.outcome]),
    ),
  };
}

const INSIDE = "its tool call writer_tool (call_writer) was abandoned";

describe("an agent tool call abandoned: the calls in flight inside it are abandoned with it", () => {
  test("with agent-ledger resolve --abandon between the crash and the resume: inspect shows nothing unresolved, and the resume runs nothing inside", async () => {
    const { store, path, first } = await ledgers.crashed("writer as a tool: dies inside write");
    expect(first.effects).toEqual([WRITE]);
    const writerTool = (await inspectJson(path)).unresolved.find(
      (attempt) => attempt.name === "writer_tool",
    );
    const reason = "wrote it by hand";
    const resolved = await agentLedger(
      path,
      "resolve",
      "--abandon",
      reason,
      "--",
      "s",
      writerTool?.attemptId ?? "",
    );
    expect(resolved.code).toBe(0);
    // The write in flight inside is abandoned at once, saying why, and the writer's run cancelled.
    const after = await inspectSteps(path);
    expect(after.steps).toEqual({});
    expect(after.text).toContain("0 unresolved");
    expect(await writerRun(path)).toEqual({
      status: "cancelled",
      result: { reason },
      calls: [
        ["model", "completed", expect.anything()],
        ["write", "abandoned", `${INSIDE}: ${reason}`],
      ],
    });

    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    const { asked, result } = await resumeApprovingAll(store, second.main, second.model);
    // Nobody is asked, nothing inside runs again: main's model is told the person's reason.
    expect(asked).toEqual([]);
    expect(result.status).toBe("completed");
    expect(second.writerModel.calls).toBe(0);
    expect(second.effects).toEqual([]);
    expect(JSON.stringify(second.model.requests.at(-1)?.input)).toContain(reason);
    expect((await inspectSteps(path)).steps).toEqual({});
    expect((await writerRun(path)).status).toBe("cancelled");
  });

  test("rejected in the app at the resume (partly instrumented writer), then a crash before the run ends: the write inside was abandoned with it already", async () => {
    // The second process asked about writer_tool, a person rejected it, and the process died
    // right after main's model answered the rejection, before its run ended.
    const { store, path, first, second } = await ledgers.crashedTwice(
      "writer as a tool, partly instrumented: dies inside write",
      "writer as a tool, partly instrumented, resumed, writer_tool rejected: dies after the next model call",
    );
    expect(first.effects).toEqual([WRITE]);
    expect(second.interruptions.map((item) => item.name)).toEqual(["writer_tool"]);
    expect((await inspectSteps(path)).steps).toEqual({});
    expect(await writerRun(path)).toEqual({
      status: "cancelled",
      result: { reason: "rejected by a person after the process died during the call" },
      calls: [
        ["model", "completed", expect.anything()],
        [
          "write",
          "abandoned",
          `${INSIDE}: rejected by a person after the process died during the call`,
        ],
      ],
    });

    const third = agentToolFixture({ writeNeedsApproval: false, instrumented: "partly" });
    third.model.calls = 1;
    const { asked, result } = await resumeApprovingAll(store, third.main, third.model);
    expect(asked).toEqual([]);
    expect(result.status).toBe("completed");
    expect(third.writerModel.calls).toBe(0);
    expect(third.effects).toEqual([]);
  });
});

/** `agent-ledger resolve <decision> <why> -- s <attemptId>` on the unresolved call `name`. */
async function resolveCall(
  path: string,
  name: string,
  decision: "--abandon" | "--approve",
  why: string,
) {
  const attempt = (await inspectJson(path)).unresolved.find(
    (unresolved) => unresolved.name === name,
  );
  return agentLedger(path, "resolve", decision, why, "--", "s", attempt?.attemptId ?? "");
}

// inspect says to decide the writer_tool call first (`decide-outer-first` on the write inside),
// but resolve takes a decision on the write first too: it is kept, nothing runs twice or is lost.
describe("the call inside an agent tool call to decide, decided first with agent-ledger resolve", () => {
  const SCENARIO = "writer as a tool, partly instrumented: dies inside write";

  test("write abandoned, then writer_tool approved at the resume: the writer runs again and its model reads the abandonment, write is not made again", async () => {
    const { store, path, first } = await ledgers.crashed(SCENARIO);
    expect(first.effects).toEqual([WRITE]);
    const reason = "written already";
    expect((await resolveCall(path, "write", "--abandon", reason)).code).toBe(0);
    expect((await inspectSteps(path)).steps).toEqual({ writer_tool: "resolve" });

    const second = writer({ instrumented: "partly" }, 1)();
    const { asked, result } = await resumeApprovingAll(store, second.main, second.model);
    expect(asked).toEqual(["writer_tool"]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    expect(JSON.stringify(second.writerModel.requests.at(-1)?.input)).toContain(reason);
    expect((await inspectSteps(path)).steps).toEqual({});
    expect(await writerRun(path)).toMatchObject({
      status: "completed",
      calls: [
        ["model", "completed", expect.anything()],
        ["write", "abandoned", reason],
        ["model", "completed", expect.anything()],
      ],
    });
  });

  test("write approved, then writer_tool abandoned: the approval cannot be acted on, and resolve says the write is abandoned with it", async () => {
    const { store, path } = await ledgers.crashed(SCENARIO);
    expect((await resolveCall(path, "write", "--approve", "write it again")).code).toBe(0);
    const abandoned = await resolveCall(path, "writer_tool", "--abandon", "not wanted");
    expect(abandoned.code).toBe(0);
    expect(abandoned.stdout).toMatch(/left in flight inside it:\n.*\(tool write\); cancelled/);
    expect((await inspectSteps(path)).steps).toEqual({});

    const second = writer({ instrumented: "partly" }, 1)();
    const { asked, result } = await resumeApprovingAll(store, second.main, second.model);
    expect(asked).toEqual([]);
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([]);
    expect(await writerRun(path)).toMatchObject({
      status: "cancelled",
      calls: [
        ["model", "completed", expect.anything()],
        ["write", "abandoned", `${INSIDE}: not wanted`],
      ],
    });
  });
});
