import { join } from "node:path";
import { inspectSession, type LedgerEvent, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import {
  Agent,
  type Model,
  type ModelRequest,
  type ModelResponse,
  RunState,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { z } from "zod";
import { ledgerTool, resumeRun, runWithLedger } from "./index.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-run-options-", { beforeAll, afterAll });
let files = 0;

async function sqliteStore(): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, `ledger-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

interface App {
  userId: string;
  greet(): string;
}

function appContext(userId: string): App {
  return { userId, greet: () => `hello ${userId}` };
}

/**
 * An agent whose `whoami` tool reads the run's context (`seen` gets what it found), then
 * answers; `hang` makes the tool never return (a process that dies inside it).
 */
function whoamiAgent(options: { needsApproval?: boolean; hang?: boolean } = {}) {
  const seen: unknown[] = [];
  const whoami = tool({
    name: "whoami",
    description: "who is asking",
    parameters: z.object({}),
    needsApproval: options.needsApproval ?? false,
    execute: async (_args, runContext) => {
      const context = runContext?.context as Partial<App> | undefined;
      seen.push(typeof context?.greet === "function" ? context.greet() : context);
      if (options.hang) await new Promise(() => {});
      return "ok";
    },
  });
  const agent = new Agent({
    name: "main",
    instructions: "main",
    tools: [ledgerTool(whoami, { idempotent: true, effect: "read" })],
  });
  const model = new ScriptedModel([
    () => [functionCall("whoami", {}, "call_w")],
    () => [message("done")],
  ]);
  return { seen, agent, model };
}

const typesOf = (events: readonly LedgerEvent[], runId = "root") =>
  events.filter((event) => event.runId === runId).map((event) => event.type);

describe("context", () => {
  test("runWithLedger hands the app's context to the tools, streamed or not", async () => {
    const store = await sqliteStore();
    const plain = whoamiAgent();
    const result = await runWithLedger(plain.agent, "who", {
      ...runOptions(store, plain.model, "plain"),
      context: appContext("u-1"),
    });
    expect(result.status).toBe("completed");
    expect(plain.seen).toEqual(["hello u-1"]);

    const streamed = whoamiAgent();
    const run = await runWithLedger(streamed.agent, "who", {
      ...runOptions(store, streamed.model, "streamed"),
      context: appContext("u-2"),
      stream: true,
    });
    for await (const _event of run.stream);
    expect((await run.done).status).toBe("completed");
    expect(streamed.seen).toEqual(["hello u-2"]);
  });

  test("resumeRun from a checkpoint: the tools get the app's context, not the state's JSON copy", async () => {
    const store = await sqliteStore();
    const { seen, agent, model } = whoamiAgent({ needsApproval: true });
    const paused = await runWithLedger(agent, "who", {
      ...runOptions(store, model),
      context: appContext("u-1"),
    });
    const { state } = firstInterruption(paused);
    // Another process: the state as text, decided there.
    const loaded = await RunState.fromString(agent, state.toString());
    const [item] = loaded.getInterruptions();
    if (!item) throw new Error("expected an interruption");
    loaded.approve(item);
    const resumed = await resumeRun(agent, {
      ...runOptions(store, model),
      state: loaded,
      context: appContext("u-1"),
    });
    expect(resumed.status).toBe("completed");
    expect(seen).toEqual(["hello u-1"]);
  });

  test("resumeRun after a crash re-executes with the app's context", async () => {
    const store = await sqliteStore();
    // The first process never comes back from the tool (as if it died there).
    const stuck = whoamiAgent({ hang: true });
    void runWithLedger(stuck.agent, "who", {
      ...runOptions(store, stuck.model),
      context: appContext("u-1"),
    });
    await expect.poll(() => stuck.seen).toEqual(["hello u-1"]);

    const { seen, agent } = whoamiAgent();
    // The first model call is answered from the ledger; the next live one is the answer.
    const model = new ScriptedModel([() => [message("done")]]);
    const resumed = await resumeRun(agent, {
      ...runOptions(store, model),
      context: appContext("u-2"),
    });
    expect(resumed.status).toBe("completed");
    expect(seen).toEqual(["hello u-2"]);
  });

  test("a context JSON cannot write is refused before anything runs, not after the run made its calls", async () => {
    // The SDK saves the context in the RunState the ledger checkpoints at the end: a client
    // with a cycle in it made a run whose calls were all made end as failed.
    const store = await sqliteStore();
    const { seen, agent, model } = whoamiAgent();
    const pool: Record<string, unknown> = { name: "pool" };
    pool.self = pool;
    await expect(
      runWithLedger(agent, "who", { ...runOptions(store, model), context: { db: pool } }),
    ).rejects.toMatchObject({
      code: "invalid-argument",
      path: "$.context",
      message: expect.stringContaining("circular"),
    });
    expect(seen).toEqual([]);
    expect(model.calls).toBe(0);
    expect(await readWholeSession(store, "s")).toEqual([]);
    // With a toJSON() the client stays out of the checkpoint, and the tools get it.
    const db = { name: "pool", self: undefined as unknown, toJSON: () => "[pool]" };
    db.self = db;
    const result = await runWithLedger(agent, "who", {
      ...runOptions(store, model),
      context: { ...appContext("u-1"), db },
    });
    expect(result.status).toBe("completed");
    expect(seen).toEqual(["hello u-1"]);
  });
});

describe("options neither function takes", () => {
  test("are refused with invalid-argument at their path, before anything is recorded or called", async () => {
    const store = await sqliteStore();
    const { agent, model } = whoamiAgent();
    const base = runOptions(store, model);
    const cases: [Promise<unknown>, string][] = [
      [runWithLedger(agent, "who", { ...base, session: {} } as never), "$.session"],
      [
        runWithLedger(agent, "who", {
          ...base,
          abortSignal: new AbortController().signal,
        } as never),
        "$.abortSignal",
      ],
      [runWithLedger(agent, "who", { ...base, state: {} } as never), "$.state"],
      [runWithLedger(agent, "who", { ...base, signal: "now" } as never), "$.signal"],
      [resumeRun(agent, { ...base, stream: true } as never), "$.stream"],
      [
        resumeRun(agent, { ...base, previousResponseId: "resp_1" } as never),
        "$.previousResponseId",
      ],
    ];
    for (const [refused, path] of cases)
      await expect(refused).rejects.toMatchObject({ code: "invalid-argument", path });
    await expect(runWithLedger(agent, "who", { ...base, sesionId: "t" } as never)).rejects.toThrow(
      /has no option "sesionId" \(its options: store, sessionId, /,
    );
    expect(await readWholeSession(store, "s")).toEqual([]);
    expect(model.calls).toBe(0);
  });
});

/** A provider model that honours the request's signal, as real ones do: it answers once aborted. */
class WaitingModel implements Model {
  calls = 0;
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    const signal = request.signal;
    if (!signal) throw new Error("no signal reached the model");
    return new Promise((_resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }
  // biome-ignore lint/correctness/useYield: never answers
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed");
  }
}

describe("signal", () => {
  test("already aborted: no model call is made or recorded, the run is closed as cancelled", async () => {
    const store = await sqliteStore();
    const { seen, agent, model } = whoamiAgent();
    const controller = new AbortController();
    controller.abort(new Error("the user left"));
    const result = await runWithLedger(agent, "who", {
      ...runOptions(store, model),
      signal: controller.signal,
    });
    expect(result.status).toBe("cancelled");
    expect(model.calls).toBe(0);
    expect(seen).toEqual([]);
    const events = await readWholeSession(store, "s");
    expect(typesOf(events)).toEqual(["run.started", "input.received", "run.cancelled"]);
    expect(events.at(-1)?.payload).toEqual({
      reason: "aborted by the caller's signal: the user left",
    });
    // Closed: nothing to resume, nothing left unresolved.
    const inspected = await inspectSession(store, "s");
    expect(inspected.runs.map((run) => run.status)).toEqual(["cancelled"]);
    expect(inspected.unresolved).toEqual([]);
    await expect(resumeRun(agent, runOptions(store, model))).rejects.toMatchObject({
      code: "run-closed",
    });
  });

  test("aborted while the model request was being committed: the call is not made, and failed", async () => {
    const controller = new AbortController();
    // The abort lands while the ledger writes the request (a slow database, a user leaving).
    class AbortingStore extends SqliteEventStore {
      override async append(request: Parameters<SqliteEventStore["append"]>[0]) {
        if (request.events.some((event) => event.type === "model.requested"))
          controller.abort(new Error("the user left"));
        return super.append(request);
      }
    }
    const store = new AbortingStore({ path: join(scratch, `ledger-${++files}.db`) });
    await store.init();
    onTestFinished(() => store.close());
    const { agent, model } = whoamiAgent();
    const result = await runWithLedger(agent, "who", {
      ...runOptions(store, model),
      signal: controller.signal,
    });
    expect(result.status).toBe("cancelled");
    expect(model.calls).toBe(0);
    const events = await readWholeSession(store, "s");
    expect(typesOf(events)).toEqual([
      "run.started",
      "input.received",
      "model.requested",
      "model.failed",
      "run.cancelled",
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("aborted during the handoff target's model call: that call failed, both runs cancelled", async () => {
    const store = await sqliteStore();
    const controller = new AbortController();
    const closer = new Agent({ name: "closer", instructions: "close" });
    const main = new Agent({ name: "main", instructions: "sell", handoffs: [closer] });
    const model = new ScriptedModel([
      () => [functionCall("transfer_to_closer", {}, "call_handoff")],
      (request) => {
        // The user leaves while the provider works; the provider stops on the signal.
        controller.abort(new Error("the user left"));
        request.signal?.throwIfAborted();
        return [message("sold")];
      },
      () => [message("a call after the abort")],
    ]);
    const result = await runWithLedger(main, "sell", {
      ...runOptions(store, model),
      signal: controller.signal,
    });
    expect(result.status).toBe("cancelled");
    expect(model.calls).toBe(2);
    const events = await readWholeSession(store, "s");
    const childRunId = events.find((event) => event.runId !== "root")?.runId as string;
    expect(typesOf(events, childRunId)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "run.cancelled",
    ]);
    expect(events.find((event) => event.type === "model.failed")?.payload).toMatchObject({
      error: { message: "the user left" },
    });
    const inspected = await inspectSession(store, "s");
    expect(inspected.unresolved).toEqual([]);
    const statuses = (runs: typeof inspected.runs): string[] =>
      runs.flatMap((run) => [run.status, ...statuses(run.children)]);
    expect(statuses(inspected.runs)).toEqual(["cancelled", "cancelled"]);
    for (const event of events.filter((each) => each.type === "run.cancelled"))
      expect(event.payload).toEqual({ reason: "aborted by the caller's signal: the user left" });
  });

  test("a streamed run stopped by its signal is recorded as stopped by it", async () => {
    const store = await sqliteStore();
    const controller = new AbortController();
    const { agent } = whoamiAgent();
    const model = new ScriptedModel([
      () => [functionCall("whoami", {}, "call_w")],
      () => {
        controller.abort(new Error("the user left"));
        return [message("done")];
      },
    ]);
    const run = await runWithLedger(agent, "who", {
      ...runOptions(store, model),
      signal: controller.signal,
      stream: true,
    });
    for await (const _event of run.stream);
    const done = await run.done;
    expect(done.status).toBe("cancelled");
    const events = await readWholeSession(store, "s");
    expect(events.at(-1)).toMatchObject({
      type: "run.cancelled",
      payload: { reason: "aborted by the caller's signal: the user left" },
    });
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("one of two runs in a process is aborted; the other goes on", async () => {
    const store = await sqliteStore();
    const controller = new AbortController();
    const waiting = new WaitingModel();
    const aborted = runWithLedger(new Agent({ name: "a", instructions: "a" }), "wait", {
      ...runOptions(store, waiting, "a"),
      signal: controller.signal,
    });
    await expect.poll(() => waiting.calls).toBe(1);
    const other = whoamiAgent();
    const completed = await runWithLedger(other.agent, "who", {
      ...runOptions(store, other.model, "b"),
      signal: new AbortController().signal,
    });
    expect(completed.status).toBe("completed");
    controller.abort(new Error("the user left"));
    expect((await aborted).status).toBe("cancelled");
    const events = await readWholeSession(store, "s");
    expect(typesOf(events, "a")).toEqual([
      "run.started",
      "input.received",
      "model.requested",
      "model.failed",
      "run.cancelled",
    ]);
    expect(typesOf(events, "b")).toContain("run.completed");
  });
});
