import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  SessionRecorder,
  StoreUnavailableError,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { innerCallsSettled } from "./index.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { delegatingAgent } from "./testing/delegating-agent.test.data.js";
import {
  type AskOptions,
  RESEARCH,
  researchModel,
  runResearch,
} from "./testing/research-agent.test.data.js";
import {
  crashedLedgers,
  researchRuns as runsOf,
  types,
} from "./testing/research-ledger.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";

// A call a tool made inside and did not wait for (it raced the call against a timeout) is still
// in flight when the tool returns: it was paid for, and its answer is recorded when it comes.
// The tool's outcome is recorded at once and the agent goes on; the tool call's child run is
// closed once every call in it has its outcome.

/** A provider answer held until `release` (or failed with `fail`). */
function heldAnswer() {
  let release!: () => void;
  let fail!: (error: Error) => void;
  const held = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  return { held, release, fail };
}

/**
 * The research agent whose inner call is held: research takes "timed out" after 20 ms and
 * returns; the agent's text and the ledger at that moment.
 */
async function raceResearch(store: EventStore, held: Promise<void>, ask: AskOptions = {}) {
  const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
  const { model, calls } = researchModel("single", {
    holdAt: (asked) => (asked.startsWith("sub:") ? held : undefined),
  });
  const text = await runResearch({ recorder, variant: "single", model, raceMs: 20, ...ask });
  return { recorder, text, calls, atReturn: await runsOf(store) };
}

const dir = scratchDirectory("agent-ledger-late-inner-", { beforeAll, afterAll });

describe("an inner call still in flight when its tool returns", () => {
  it("does not hold the agent up; its late answer is recorded, then the child run is closed", async () => {
    for (const stream of [false, true]) {
      const store = new MemoryEventStore();
      const { held, release } = heldAnswer();
      const { recorder, text, calls, atReturn } = await raceResearch(store, held, { stream });
      // The agent finished with research's answer while the inner call was still held.
      expect(text).toBe("summary");
      expect(calls).toEqual(["research a and b", "sub:a and b outline", "final"]);
      expect(payload(atReturn.root.find((e) => e.type === "tool.completed")).result).toBe(
        "timed out",
      );
      expect(types(atReturn.child)).toEqual(["run.started", "model.requested"]);

      release();
      await innerCallsSettled({ recorder });
      const { root, child } = await runsOf(store);
      expect(types(child)).toEqual([
        "run.started",
        "model.requested",
        "model.completed",
        "run.completed",
      ]);
      // The scripted answer to "sub:a and b outline".
      expect(payload(child[2]).response.content[0].text).toBe("and of a");
      // The tool's outcome was recorded first.
      const outcome = root.find((event) => event.type === "tool.completed") as LedgerEvent;
      expect(outcome.commitCursor).toBeLessThan((child[2] as LedgerEvent).commitCursor);
      expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
    }
  });

  it("records a late failure as the call's failure, then closes the child run", async () => {
    const store = new MemoryEventStore();
    const { held, fail } = heldAnswer();
    const { recorder, text } = await raceResearch(store, held);
    expect(text).toBe("summary");
    fail(new Error("upstream timed out after 30 s"));
    await innerCallsSettled({ recorder });
    const { child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "run.completed",
    ]);
    expect(payload(child[2]).error.message).toBe("upstream timed out after 30 s");
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });

  it("a late answer the ledger cannot take leaves the child run open and stops the run", async () => {
    class RefusesInnerAnswers extends MemoryEventStore {
      override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
        const inner = request.runId !== RESEARCH.runId;
        if (inner && request.events.some((event) => event.type === "model.completed"))
          throw new StoreUnavailableError("disk full");
        return super.append(request);
      }
    }
    const store = new RefusesInnerAnswers();
    const { held, release } = heldAnswer();
    const { recorder, text } = await raceResearch(store, held);
    expect(text).toBe("summary");
    release();
    await expect(innerCallsSettled({ recorder })).rejects.toMatchObject({
      code: "store-unavailable",
    });
    // Still in flight as far as the ledger knows.
    const { child } = await runsOf(store);
    expect(types(child)).toEqual(["run.started", "model.requested"]);
    // The run is stopped: its next model call is refused before it goes out.
    const { model, calls } = researchModel("single");
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    await expect(generateText({ model: wrapped, prompt: "go on" })).rejects.toMatchObject({
      code: "store-unavailable",
    });
    expect(calls).toEqual([]);

    // A resume answers research from the ledger and settles what it left in flight.
    const resumed = await SessionRecorder.resume({ store, actor, ...RESEARCH });
    const again = researchModel("single");
    const text2 = await runResearch({ recorder: resumed, variant: "single", model: again.model });
    expect([text2, again.calls]).toEqual(["summary", []]);
    expect(types((await runsOf(store)).child)).toEqual([
      "run.started",
      "model.requested",
      "attempt.abandoned",
      "run.completed",
    ]);
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });

  it("innerCallsSettled takes { recorder }: anything else is refused with the path", async () => {
    const recorder = new SessionRecorder({ store: new MemoryEventStore(), ...RESEARCH, actor });
    await expect(innerCallsSettled({ recorder })).resolves.toBeUndefined();
    await expect(innerCallsSettled(recorder as never)).rejects.toMatchObject({
      code: "invalid-argument",
      path: "$.recorder",
    });
  });
});

describe("innerCallsSettled with a bound the caller chooses", () => {
  it("timeoutMs: past it, rejects with unresolved-attempt naming the calls still in flight; they stay so", async () => {
    const store = new MemoryEventStore();
    const { held, release } = heldAnswer();
    const { recorder, text, atReturn } = await raceResearch(store, held);
    expect(text).toBe("summary");
    const [, inner] = atReturn.child;
    const error = await innerCallsSettled({ recorder, timeoutMs: 30 }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "unresolved-attempt",
      attemptId: inner?.attemptId,
      attempt: { attemptId: inner?.attemptId, runId: inner?.runId, kind: "model" },
      details: {
        inFlight: [{ runId: inner?.runId, attemptId: inner?.attemptId, kind: "model" }],
      },
    });
    expect((error as Error).message).toContain(
      `model call ${inner?.attemptId} on run ${inner?.runId}`,
    );
    // The ledger says the truth: the call went out and has not come back.
    expect(types((await runsOf(store)).child)).toEqual(["run.started", "model.requested"]);

    // The wait stopped, not the call: its answer, when it comes, is recorded and the run closed.
    release();
    await innerCallsSettled({ recorder, timeoutMs: 5_000 });
    expect(types((await runsOf(store)).child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
  });

  it("signal: once it aborts, rejects the same way, with the abort's reason as the cause", async () => {
    const store = new MemoryEventStore();
    const { held, release } = heldAnswer();
    const { recorder } = await raceResearch(store, held);
    const controller = new AbortController();
    const waiting = innerCallsSettled({ recorder, signal: controller.signal });
    controller.abort(new Error("shutting down"));
    await expect(waiting).rejects.toMatchObject({
      code: "unresolved-attempt",
      cause: { message: "shutting down" },
    });
    // Aborted already, with nothing in flight: there is nothing to wait for.
    release();
    await innerCallsSettled({ recorder });
    await expect(
      innerCallsSettled({ recorder, signal: controller.signal }),
    ).resolves.toBeUndefined();
  });

  it("names a sub-agent's tool call in flight too", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const { held, release } = heldAnswer();
    const { run } = delegatingAgent({
      recorder,
      lookup: async () => {
        await held;
        return "slow result";
      },
      delegate: (sub) =>
        Promise.race([sub(), new Promise<string>((ok) => setTimeout(ok, 20, "late"))]),
    });
    expect((await run()).text).toBe("done");
    const lookup = (await runsOf(store)).child.find((event) => event.type === "tool.requested");
    await expect(innerCallsSettled({ recorder, timeoutMs: 30 })).rejects.toMatchObject({
      code: "unresolved-attempt",
      details: {
        inFlight: [
          {
            runId: lookup?.runId,
            attemptId: lookup?.attemptId,
            kind: "tool",
            name: "lookup",
            toolCallId: "l1",
          },
        ],
      },
    });
    release();
    await innerCallsSettled({ recorder }).catch(() => undefined);
  });

  it("takes a signal and a number of milliseconds: anything else is refused with the path", async () => {
    const recorder = new SessionRecorder({ store: new MemoryEventStore(), ...RESEARCH, actor });
    for (const [options, path] of [
      [{ timeoutMs: -1 }, "$.timeoutMs"],
      [{ timeoutMs: "50" }, "$.timeoutMs"],
      [{ timeoutMs: Number.NaN }, "$.timeoutMs"],
      [{ signal: { aborted: false } }, "$.signal"],
    ] as const)
      await expect(innerCallsSettled({ recorder, ...(options as object) })).rejects.toMatchObject({
        code: "invalid-argument",
        path,
      });
  });
});

describe("a sub-agent a tool left running", () => {
  it("has its call in flight recorded before the child run closes; a call it starts later is refused", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const { held, release } = heldAnswer();
    let subAgent: Promise<string> | undefined;
    const { run, asked } = delegatingAgent({
      recorder,
      lookup: async () => {
        await held;
        return "slow result";
      },
      delegate: (sub) => {
        subAgent = sub();
        const timeout = new Promise<string>((resolve) => {
          setTimeout(() => resolve("timed out"), 20);
        });
        return Promise.race([subAgent, timeout]);
      },
    });
    const { text } = await run();
    expect(text).toBe("done");
    expect(types((await runsOf(store)).child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
    ]);

    // Released, slow's result is recorded, then the child run closes: nothing is in flight on
    // it. The sub-agent's next call comes after that: refused before it goes out.
    release();
    await innerCallsSettled({ recorder });
    await expect(subAgent).rejects.toMatchObject({ code: "run-closed" });
    expect(asked).toEqual(["user", "user", "tool"]);
    const { child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "run.completed",
    ]);
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });
});

const crashInside = crashedLedgers("ai-sdk-late-");

describe("a crash while an inner call the tool did not wait for is in flight", () => {
  it("on resume the call is abandoned, saying why, and the child run closed as the tool ended", async () => {
    const store = await crashInside(
      "research, racing its inner call, once its outcome is committed",
    );
    const before = await runsOf(store);
    expect(types(before.child)).toEqual(["run.started", "model.requested"]);
    expect(before.root.at(-1)?.type).toBe("tool.completed");

    const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
    const { model, calls } = researchModel("single");
    const text = await runResearch({ recorder, variant: "single", model, raceMs: 20 });
    expect(text).toBe("summary");
    // Research is answered from the ledger: its inner call is not made again.
    expect(calls).toEqual(["final"]);
    const { child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "attempt.abandoned",
      "run.completed",
    ]);
    expect(payload(child[2]).reason).toBe(
      "left in flight by its tool call research (call_0), which had ended: its answer was never recorded, and that tool call is not run again",
    );
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });
});

// A server that resumes the run for each request may resume it while a call its last request's
// tool left in flight has not answered yet: the resume leaves that child run to the close that
// waits for the call, instead of abandoning a call whose answer is on its way.
describe("a resume in the same process while an inner call is still in flight", () => {
  it("leaves the child run to its close: the late answer is recorded, nothing abandoned", async () => {
    const stores: [string, () => Promise<[EventStore, EventStore]>][] = [
      [
        "the same store",
        async () => {
          const store = new MemoryEventStore();
          return [store, store];
        },
      ],
      [
        "two stores on one SQLite file",
        async () => {
          const path = join(dir, "resumed-while-late.db");
          const first = new SqliteEventStore({ path });
          const second = new SqliteEventStore({ path });
          await first.init();
          await second.init();
          return [first, second];
        },
      ],
    ];
    for (const [name, open] of stores) {
      const [store, again] = await open();
      const { held, release } = heldAnswer();
      const turn1 = await raceResearch(store, held);
      expect(turn1.text, name).toBe("summary");
      // The next request resumes the run while the inner answer is still on its way.
      const recorder = await SessionRecorder.resume({ store: again, ...RESEARCH, actor });
      const { model, calls } = researchModel("single");
      expect(await runResearch({ recorder, variant: "single", model }), name).toBe("summary");
      expect(calls, name).toEqual([]);
      release();
      await innerCallsSettled({ recorder: turn1.recorder });
      const { child } = await runsOf(store);
      expect(types(child), name).toEqual([
        "run.started",
        "model.requested",
        "model.completed",
        "run.completed",
      ]);
      expect((await inspectSession(store, RESEARCH.sessionId)).unresolved, name).toEqual([]);
    }
  });
});
