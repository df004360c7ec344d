import {
  InvalidArgumentError,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  readWholeSession,
  resolveEvents,
  SessionRecorder,
} from "@agent-ledger/core";
import { Agent, setTracingDisabled, user } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  loadRunStateCheckpoint,
  openAiAgentsVersion,
  resumeRun,
  runWithLedger,
  saveRunStateCheckpoint,
} from "./index.js";
import { FailingStore } from "./testing/failing-store.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { message, ScriptedModel, scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

describe("runWithLedger", () => {
  test("takes input items built by the SDK's helpers (fields left undefined)", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    // user() leaves providerData undefined, which is not plain JSON.
    const result = await runWithLedger(main, [user("sell a book")], runOptions(store, model));
    expect(result.status).toBe("completed");
    const input = (await readWholeSession(store, "s")).find(
      (event) => event.type === "input.received",
    );
    expect(input?.payload).toEqual({
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "sell a book" }] },
      ],
    });
  });

  test("re-executes from the recorded input as given, an object with a $ledger key included", async () => {
    const store = new MemoryEventStore();
    // An input item whose provider data has a key the ledger uses for its own markers.
    const input = [
      {
        ...user("sell a book"),
        providerData: { $ledger: "json", ref: `sha256:${"9".repeat(64)}` },
      },
    ];
    // The first process stops inside the idempotent lookup and never comes back (as if it died).
    const stuck = fixture({ afterEffect: () => new Promise<void>(() => {}) });
    void runWithLedger(stuck.main, input, runOptions(store, stuck.model));
    await expect.poll(() => stuck.effects).toEqual(["lookup book"]);

    const { main, model, effects } = fixture();
    const resumed = await resumeRun(main, runOptions(store, model));
    expect(resumed.status).toBe("completed");
    // (The scripted model answers by position: its first live call asks for lookup again.)
    expect(effects.filter((effect) => effect === "charge 7")).toHaveLength(1);
    // The input recorded once and read back as given.
    const recorded = await resolveEvents(store, await readWholeSession(store, "s"));
    const inputs = recorded.filter((event) => event.type === "input.received");
    expect(inputs).toHaveLength(1);
    expect(inputs[0]?.payload).toMatchObject({
      input: [{ providerData: input[0]?.providerData }],
    });
  });

  test("records tools with callId and cause, and the handoff target on a child run", async () => {
    const store = new MemoryEventStore();
    const { main, model, effects } = fixture();
    const result = await runWithLedger(main, "sell a book", runOptions(store, model));
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("sold for 7");
    expect(effects).toEqual(["lookup book", "charge 7"]);

    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    const [root] = inspection.runs;
    expect(root?.status).toBe("completed");
    expect(root?.actor).toMatchObject({ id: "main", framework: "openai-agents" });
    const child = root?.children[0];
    expect(child?.actor?.id).toBe("closer");
    expect(child?.parentRunId).toBe("root");
    expect(child?.status).toBe("completed");
    // The closer's model call is recorded on its child run, main's three on the root.
    expect(child?.steps.filter((step) => step.kind === "model")).toHaveLength(1);
    expect(root?.steps.filter((step) => step.kind === "model")).toHaveLength(3);

    const events = await readWholeRun(store, { sessionId: "s", runId: "root" });
    const tools = events.filter((event) => event.type === "tool.requested");
    expect(tools.map((event) => (event.payload as { toolCallId: string }).toolCallId)).toEqual([
      "call_lookup",
      "call_charge",
    ]);
    for (const requested of tools) {
      const cause = events.find((event) => event.eventId === requested.causedByEventId);
      expect(cause?.type).toBe("model.completed");
      expect(JSON.stringify(cause?.payload)).toContain(
        (requested.payload as { toolCallId: string }).toolCallId,
      );
    }
    expect(tools[0]?.payload).toMatchObject({ effect: { kind: "read", idempotent: true } });
    expect(tools[1]?.payload).toMatchObject({ effect: { kind: "unknown", idempotent: false } });
    const final = events.filter((event) => event.type === "checkpoint.saved").at(-1);
    expect(final?.payload).toMatchObject({ kind: "final", sdkVersion: "0.14.3" });
    expect(openAiAgentsVersion()).toBe("0.14.3");
    // A completed run resumes to its recorded output without calling anything.
    const again = await resumeRun(main, { store, sessionId: "s", runId: "root" });
    expect(again).toMatchObject({ status: "completed", finalOutput: "sold for 7" });
    expect(model.calls).toBe(4);
  });

  test("streams, and records the same calls", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const run = await runWithLedger(main, "sell a book", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(model),
      stream: true,
    });
    for await (const _event of run.stream) {
      // read the stream
    }
    const result = await run.done;
    expect(result.finalOutput).toBe("sold for 7");
    const events = await readWholeSession(store, "s");
    const models = events.filter((event) => event.type === "model.requested");
    expect(models.map((event) => event.metadata)).toEqual(Array(4).fill({ stream: true }));
    expect(events.filter((event) => event.type === "model.completed")).toHaveLength(4);
  });

  test("a stream the consumer stops reading is recorded as cancelled, not completed", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const run = await runWithLedger(main, "sell a book", {
      ...runOptions(store, model),
      stream: true,
    });
    for await (const event of run.stream) {
      if (event.type === "run_item_stream_event") break; // the user pressed stop
    }
    const result = await run.done;
    expect(result.status).toBe("cancelled");
    expect(result.finalOutput).toBeUndefined();
    expect(model.calls).toBeLessThan(4);
    const events = await readWholeRun(store, { sessionId: "s", runId: "root" });
    expect(events.at(-1)?.type).toBe("run.cancelled");
    expect(events.some((event) => event.type === "run.completed")).toBe(false);
    expect(events.some((event) => event.type === "checkpoint.saved")).toBe(false);
    // Nothing to resume: the run says it was cancelled, and does not pretend it finished.
    const again = await resumeRun(main, { store, sessionId: "s", runId: "root" }).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(again, "run-closed")).toBe(true);
  });

  test("fails closed: a tool never runs when tool.requested cannot be committed", async () => {
    const store = new FailingStore();
    const { main, model, effects } = fixture();
    store.failWhen = (request) =>
      request.events.some(
        (event) =>
          event.type === "tool.requested" && (event.payload as { name: string }).name === "charge",
      );
    const failure = await runWithLedger(main, "sell a book", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(model),
    }).catch((error: unknown) => error);
    expect(String(failure)).toMatch(/store is down/);
    expect(effects).toEqual(["lookup book"]);
    expect(model.calls).toBe(2);
  });

  test("a store outage at a tool call leaves the run open, and resumeRun finishes it", async () => {
    const store = new FailingStore();
    let failures = 0;
    // Unreachable for the charge's tool.requested and the recorder's two retries, then back.
    store.failWhen = (request) =>
      request.events.some(
        (event) =>
          event.type === "tool.requested" && (event.payload as { name: string }).name === "charge",
      ) && ++failures <= 3;
    const first = fixture();
    const failure = await runWithLedger(
      first.main,
      "sell a book",
      runOptions(store, first.model),
    ).catch((error: unknown) => error);
    expect(String(failure)).toMatch(/store is down/);
    expect(first.effects).toEqual(["lookup book"]);
    // Not the run's own failure: it stays open to be resumed.
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");

    const second = fixture();
    second.model.calls = 2;
    const result = await resumeRun(second.main, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold for 7" });
    expect(second.effects).toEqual(["charge 7"]);
  });

  test("an approval interruption saves a checkpoint; approving goes on from it", async () => {
    const store = new MemoryEventStore();
    const { main, model, effects } = fixture({ chargeNeedsApproval: true });
    const paused = await runWithLedger(main, "sell a book", runOptions(store, model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(effects).toEqual(["lookup book"]);
    const events = await readWholeRun(store, { sessionId: "s", runId: "root" });
    const checkpoint = events.at(-1);
    expect(checkpoint?.type).toBe("checkpoint.saved");
    expect(checkpoint?.payload).toMatchObject({ kind: "interruption", sdkVersion: "0.14.3" });

    // A new process: load the checkpoint, a person approves, the run goes on.
    const fresh = fixture({ chargeNeedsApproval: true });
    fresh.model.calls = 2; // the script continues where the first process stopped
    const reloaded = await resumeRun(fresh.main, runOptions(store, fresh.model));
    expect(reloaded.status).toBe("interrupted");
    expect(fresh.model.calls).toBe(2);
    const { state, item } = firstInterruption(reloaded);
    state.approve(item);
    const done = await resumeRun(fresh.main, { ...runOptions(store, fresh.model), state });
    expect(done.finalOutput).toBe("sold for 7");
    expect(fresh.effects).toEqual(["charge 7"]);
    expect(fresh.model.calls).toBe(4);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.status).toBe("completed");
    expect(inspection.unresolved).toEqual([]);
  });

  test("a final output with half an emoji (a lone surrogate) is recorded with U+FFFD and the run completes", async () => {
    const half = "thanks 😀".slice(0, -1);
    for (const outputType of [undefined, z.object({ note: z.string() })]) {
      const store = new MemoryEventStore();
      const text = outputType ? JSON.stringify({ note: half }) : half;
      const model = new ScriptedModel([() => [message(text)]]);
      const agent = new Agent({ name: "main", ...(outputType ? { outputType } : {}) });
      const result = await runWithLedger(agent, "go", runOptions(store, model));
      expect(result.status).toBe("completed");
      expect(result.finalOutput).toEqual(outputType ? { note: half } : half);
      const completed = (await readWholeSession(store, "s")).find(
        (event) => event.type === "run.completed",
      );
      const recorded = "thanks \uFFFD";
      expect(completed?.payload).toEqual({ output: outputType ? { note: recorded } : recorded });
      expect((await resumeRun(agent, runOptions(store, model))).finalOutput).toEqual(
        completed && (completed.payload as { output: unknown }).output,
      );
    }
  });

  test("saveRunStateCheckpoint and loadRunStateCheckpoint refuse bad arguments at their path, writing nothing", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture({ chargeNeedsApproval: true });
    const { state } = firstInterruption(
      await runWithLedger(main, "sell a book", runOptions(store, model)),
    );
    const before = await readWholeSession(store, "s");
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "root",
      actor: { type: "agent", id: "main" },
    });
    const save = saveRunStateCheckpoint as (...args: unknown[]) => Promise<unknown>;
    const load = loadRunStateCheckpoint as (...args: unknown[]) => Promise<unknown>;
    const options = { kind: "interruption", currentRunId: "root" };
    const cases: [() => Promise<unknown>, string, RegExp][] = [
      [() => save({}, state, options), "$.recorder", /needs a SessionRecorder, got object/],
      [() => save(recorder, state.toString(), options), "$.state", /a RunState .*, got "\{/],
      [() => save(recorder, state), "$", /saveRunStateCheckpoint's options are/],
      [() => save(recorder, state, { ...options, kind: "paused" }), "$.kind", /"interruption"/],
      [() => save(recorder, state, { kind: "final" }), "$.currentRunId", /got undefined/],
      [() => save(recorder, state, { ...options, runId: "r" }), "$.runId", /no option "runId"/],
      [() => load(null, { state: "{}" }), "$.agent", /loadRunStateCheckpoint needs an Agent/],
      [() => load(main, null), "$.payload", /a RunState checkpoint's payload .*, got null/],
      [() => load(main, { state: "{}" }), "$.payload", /got object/],
    ];
    for (const [call, path, message] of cases) {
      const failure = await call().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InvalidArgumentError);
      expect(failure).toMatchObject({ code: "invalid-argument", path });
      expect((failure as Error).message).toMatch(message);
    }
    expect(await readWholeSession(store, "s")).toEqual(before);
  });

  test("refuses a RunState checkpoint written by another SDK version", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture({ chargeNeedsApproval: true });
    await runWithLedger(main, "sell a book", runOptions(store, model));
    const events = await readWholeRun(store, { sessionId: "s", runId: "root" });
    const checkpoint = events.at(-1);
    const writer = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "root",
      actor: { type: "agent", id: "main" },
    });
    await writer.checkpoint({ ...(checkpoint?.payload as object), sdkVersion: "0.20.0" });
    const failure = await resumeRun(main, runOptions(store, model)).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(failure, "invalid-argument")).toBe(true);
    expect((failure as Error).message).toContain("0.20.0");
    expect((failure as Error).message).toContain("0.14.3");
  });
});
