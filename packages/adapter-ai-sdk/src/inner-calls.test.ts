import { join } from "node:path";
import {
  type EventStore,
  LedgerError,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
  StoreUnavailableError,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import type { CrashScenarioName } from "./testing/crash-scenarios.test.data.js";
import {
  type AskOptions,
  RESEARCH,
  type ResearchVariant,
  researchModel,
  runResearch,
} from "./testing/research-agent.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-inner-", { beforeAll, afterAll });
let crashes = 0;

async function crashInside(scenario: CrashScenarioName) {
  const path = join(scratch, `crash-${++crashes}.db`);
  const crashed = await crashInChild(scenario, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { store, crashed };
}

/** Runs the research agent again on a resumed recorder: its text, and the prompts sent live. */
async function resumeResearch(store: EventStore, variant: ResearchVariant, ask: AskOptions = {}) {
  const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
  const { model, calls } = researchModel(variant);
  const effects: string[] = [];
  const text = await runResearch({ recorder, variant, model, effects, ...ask });
  return { text, calls, effects };
}

/** The session's events by run: the agent's run, and the child run of each research call. */
async function runsOf(store: EventStore) {
  const events = await readWholeSession(store, RESEARCH.sessionId);
  const root = events.filter((event) => event.runId === RESEARCH.runId);
  const researchCalls = root.filter((event) => event.type === "tool.requested");
  const childOf = (request: LedgerEvent) => {
    const started = events.find(
      (event) => event.type === "run.started" && event.causedByEventId === request.eventId,
    );
    return events.filter((event) => event.runId === started?.runId);
  };
  return { root, researchCalls, childOf };
}

const types = (events: LedgerEvent[]) => events.map((event) => event.type);

describe("a model call made inside a wrapped tool", () => {
  it("is recorded on a child run of the tool call; a resume at the final call replays it", async () => {
    const { store, crashed } = await crashInside("research at the final call");
    // The agent's call, research's inner call, and the final call the child died in.
    expect(crashed.modelCalls).toBe(3);

    const resumed = await resumeResearch(store, "single");
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);

    const { root, researchCalls, childOf } = await runsOf(store);
    // The agent's run holds its own two model calls only (the final one twice: in flight at
    // the crash, it was made again as a retry); the inner one is the tool's.
    const requests = root.filter((event) => event.type === "model.requested");
    expect(new Set(requests.map((event) => event.stepId)).size).toBe(2);
    expect(requests.map((event) => event.retryOf)).toEqual([
      undefined,
      undefined,
      requests[1]?.attemptId,
    ]);
    expect(JSON.stringify(requests.map((event) => payload(event).request))).not.toContain("sub:");
    expect(researchCalls).toHaveLength(1);
    const child = childOf(researchCalls[0] as LedgerEvent);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect(child[0]?.parentRunId).toBe(RESEARCH.runId);
    expect(JSON.stringify(payload(child[1]).request)).toContain("sub:a and b outline");

    // The run finished but was not closed: resuming it again answers everything.
    const again = await resumeResearch(store, "single");
    expect(again.text).toBe("summary");
    expect(again.calls).toEqual([]);
  });

  it("replays two research calls run in parallel, two inner calls each", async () => {
    const { store, crashed } = await crashInside("research in parallel at the final call");
    expect(crashed.modelCalls).toBe(6);

    const resumed = await resumeResearch(store, "parallel");
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);

    const { researchCalls, childOf } = await runsOf(store);
    expect(researchCalls).toHaveLength(2);
    for (const [index, topic] of ["a", "b"].entries()) {
      const child = childOf(researchCalls[index] as LedgerEvent);
      const prompts = child
        .filter((event) => event.type === "model.requested")
        .map((event) => JSON.stringify(payload(event).request));
      expect(prompts).toHaveLength(2);
      expect(prompts[0]).toContain(`sub:${topic} outline`);
      expect(prompts[1]).toContain(`sub:${topic} details`);
      expect(child.at(-1)?.type).toBe("run.completed");
    }
  });

  it("re-runs an idempotent tool that died inside its inner call: recorded inner calls are answered", async () => {
    const { store, crashed } = await crashInside("research inside its second inner call");
    // The agent's call, the outline, and the details call the child died in.
    expect(crashed.modelCalls).toBe(3);

    const resumed = await resumeResearch(store, "twoParts");
    expect(resumed.text).toBe("summary");
    // The outline comes from the ledger; the details call was in flight, so it is made again.
    expect(resumed.calls).toEqual(["sub:a details", "final"]);
    expect(resumed.effects).toEqual(["research:a"]);

    const { researchCalls, childOf } = await runsOf(store);
    // The re-run is a retry of the research call, adopting the child run of its first attempt.
    expect(researchCalls).toHaveLength(2);
    expect(researchCalls[1]?.retryOf).toBe(researchCalls[0]?.attemptId);
    const child = childOf(researchCalls[0] as LedgerEvent);
    expect(child.filter((event) => event.type === "model.completed")).toHaveLength(2);
    expect(child.at(-1)?.type).toBe("run.completed");
    expect(childOf(researchCalls[1] as LedgerEvent)).toEqual([]);
  });

  it("stops the tool's run when the ledger refuses an inner call: no tool outcome, no next model call", async () => {
    // The tool's inner requests cannot be committed (the recorder retries an append a few
    // times); the ledger takes every other event, the child run's end and the tool's outcome.
    class RefusesInnerRequests extends MemoryEventStore {
      override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
        const inner = request.runId !== RESEARCH.runId;
        if (inner && request.events.some((event) => event.type === "model.requested"))
          throw new StoreUnavailableError("disk full");
        return super.append(request);
      }
    }
    const store = new RefusesInnerRequests();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const { model, calls } = researchModel("single");
    const error = await runResearch({ recorder, variant: "single", model }).catch(
      (caught: unknown) => caught,
    );
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    // Neither the inner call nor the agent's next call reached the provider.
    expect(calls).toEqual(["research a and b"]);
    const { root, researchCalls, childOf } = await runsOf(store);
    // The tool's outcome would be the ledger's error, answered on every resume: not recorded.
    expect(types(root)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
    ]);
    expect(types(childOf(researchCalls[0] as LedgerEvent))).toEqual(["run.started"]);
  });

  it("fails the child run with the tool's error, and reads a streaming tool's inner calls there too", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const { model: mock, calls } = researchModel("parallel");
    const model = wrapLanguageModel({ model: mock, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      {
        research: tool({
          inputSchema: z.object({ topic: z.string() }),
          async *execute({ topic }) {
            yield "started";
            const { text } = await generateText({ model, prompt: `sub:${topic} outline` });
            if (topic === "b") throw new Error(`no sources for ${text}`);
            yield text;
          },
        }),
      },
      { recorder },
    );
    const { text } = await generateText({
      model,
      tools,
      prompt: "research a, b in parallel",
      stopWhen: stepCountIs(3),
    });
    expect(text).toBe("summary");
    expect(calls).toHaveLength(4);

    const { root, researchCalls, childOf } = await runsOf(store);
    expect(root.filter((event) => event.type === "model.requested")).toHaveLength(2);
    const [a, b] = researchCalls.map((call) => childOf(call));
    expect(types(a ?? [])).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect(types(b ?? [])).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.failed",
    ]);
    expect(JSON.stringify(payload(b?.at(-1)))).toContain("no sources for outline of b");
    expect(root.find((event) => event.type === "tool.failed")).toBeDefined();
  });
});

/** The prompt of a recorded model request, and the text of its answer, per call of `events`. */
function innerCalls(events: LedgerEvent[]) {
  return events
    .filter((event) => event.type === "model.requested")
    .map((requested) => {
      const answer = events.find(
        (event) => event.type === "model.completed" && event.attemptId === requested.attemptId,
      );
      const prompt = payload(requested).request.prompt.at(-1).content[0].text as string;
      const text = payload(answer)?.response.content[0].text as string | undefined;
      return { prompt, text, retryOf: requested.retryOf };
    });
}

const researched = (root: LedgerEvent[]) =>
  payload(root.find((event) => event.type === "tool.completed"))?.result;

describe("two model calls made at once inside a wrapped tool", () => {
  it("live: each gets its own answer, both on the tool call's child run", async () => {
    for (const stream of [false, true]) {
      const store = new MemoryEventStore();
      const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
      const { model, calls } = researchModel("atOnce");
      const effects: string[] = [];
      const text = await runResearch({ recorder, variant: "atOnce", model, effects, stream });
      expect(text).toBe("summary");
      expect(calls.filter((call) => call.startsWith("sub:")).sort()).toEqual([
        "sub:a details",
        "sub:a outline",
      ]);
      const { root, researchCalls, childOf } = await runsOf(store);
      expect(researched(root)).toBe("outline of a, details of a");
      const child = childOf(researchCalls[0] as LedgerEvent);
      expect(child.at(-1)?.type).toBe("run.completed");
      expect(innerCalls(child).sort((a, b) => a.prompt.localeCompare(b.prompt))).toEqual([
        { prompt: "sub:a details", text: "details of a", retryOf: undefined },
        { prompt: "sub:a outline", text: "outline of a", retryOf: undefined },
      ]);
    }
  });

  it("resumed with the calls started the other way round after a crash inside the second: each gets its own answer", async () => {
    const { store, crashed } = await crashInside("research at once, inside its second inner call");
    // The agent's call, the outline, and the details call the child died in.
    expect(crashed.modelCalls).toBe(3);
    const before = await runsOf(store);
    // Recorded outline first, answered; details in flight.
    expect(innerCalls(before.childOf(before.researchCalls[0] as LedgerEvent))).toEqual([
      { prompt: "sub:a outline", text: "outline of a", retryOf: undefined },
      { prompt: "sub:a details", text: undefined, retryOf: undefined },
    ]);

    const resumed = await resumeResearch(store, "atOnce", { reverse: true });
    expect(resumed.text).toBe("summary");
    // The outline comes from the ledger; the details call was in flight, so it is made again.
    expect(resumed.calls).toEqual(["sub:a details", "final"]);
    expect(resumed.effects).toEqual(["research:a"]);

    const { root, researchCalls, childOf } = await runsOf(store);
    expect(researched(root)).toBe("outline of a, details of a");
    expect(researchCalls).toHaveLength(2);
    const child = childOf(researchCalls[0] as LedgerEvent);
    const [outline, details, retried] = innerCalls(child);
    expect(retried).toEqual({
      prompt: "sub:a details",
      text: "details of a",
      retryOf: child.filter((event) => event.type === "model.requested")[1]?.attemptId,
    });
    expect([outline?.text, details?.text]).toEqual(["outline of a", undefined]);
    expect(child.at(-1)?.type).toBe("run.completed");
  });

  it("resumed with streamed calls started the other way round after a crash once both were in: none is made again", async () => {
    const { store, crashed } = await crashInside(
      "research at once, after both streamed inner calls",
    );
    expect(crashed.modelCalls).toBe(3);
    const before = await runsOf(store);
    const prompts = innerCalls(before.childOf(before.researchCalls[0] as LedgerEvent));
    expect(prompts.map(({ prompt }) => prompt)).toEqual(["sub:a outline", "sub:a details"]);

    const resumed = await resumeResearch(store, "atOnce", { reverse: true, stream: true });
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual(["research:a"]);

    const { root, researchCalls, childOf } = await runsOf(store);
    expect(researched(root)).toBe("outline of a, details of a");
    const child = childOf(researchCalls[0] as LedgerEvent);
    expect(innerCalls(child)).toEqual([
      { prompt: "sub:a outline", text: "outline of a", retryOf: undefined },
      { prompt: "sub:a details", text: "details of a", retryOf: undefined },
    ]);
    expect(child.at(-1)?.type).toBe("run.completed");
  });
});
