import {
  InvalidArgumentError,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { setTracingDisabled, user } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

describe("runWithLedger and resumeRun check their options before anything runs", () => {
  test("a bad maxTurns is invalid-argument at $.maxTurns: no model call, nothing recorded", async () => {
    for (const maxTurns of ["abc", 0, -1, 1.5, Number.NaN]) {
      const store = new MemoryEventStore();
      const { main, model } = fixture();
      const failure = await runWithLedger(main, "sell a book", {
        ...runOptions(store, model),
        maxTurns: maxTurns as number,
      }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "invalid-argument", path: "$.maxTurns" });
      expect(model.calls).toBe(0);
      expect(await store.listRuns("s")).toEqual([]);
      const resumed = await resumeRun(main, {
        ...runOptions(store, model),
        maxTurns: maxTurns as number,
      }).catch((error: unknown) => error);
      expect(resumed).toMatchObject({ code: "invalid-argument", path: "$.maxTurns" });
    }
  });

  test("missing or malformed options are refused with a code and the option's path", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const run = runWithLedger as (...args: unknown[]) => Promise<unknown>;
    const resume = resumeRun as (...args: unknown[]) => Promise<unknown>;
    const base = { store, sessionId: "s" };
    // An id that is not one is invalid-event, as the recorder says it; the rest invalid-argument.
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => run(main, "x"), "invalid-argument", "$"],
      [() => resume(main), "invalid-argument", "$"],
      [() => run(main, "x", { sessionId: "s" }), "invalid-argument", "$.store"],
      [() => run(main, "x", { store }), "invalid-event", "$.sessionId"],
      [() => resume(main, base), "invalid-event", "$.runId"],
      [() => run(main, "x", { ...base, stream: "yes" }), "invalid-argument", "$.stream"],
      [() => resume(main, { ...base, runId: "r", state: "{}" }), "invalid-argument", "$.state"],
      [() => run(main, "x", { ...base, modelProvider: {} }), "invalid-argument", "$.modelProvider"],
      [() => run(main, "x", { ...base, runner: {} }), "invalid-argument", "$.runner"],
    ];
    for (const [call, code, path] of cases) {
      const failure = await call().catch((error: unknown) => error);
      expect(LedgerError.isInstance(failure, code as never)).toBe(true);
      expect(failure).toMatchObject({ path });
    }
    // No runId: said as what resumeRun needs, not as a malformed id ("got undefined").
    await expect(resume(main, base)).rejects.toThrow(
      /resumeRun continues one run: give the runId runWithLedger returned/,
    );
    expect(model.calls).toBe(0);
    expect(await store.listRuns("s")).toEqual([]);
  });

  test("an agent or an input the SDK does not take is refused at $.agent / $.input: nothing recorded, no model call", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const run = runWithLedger as (...args: unknown[]) => Promise<unknown>;
    const resume = resumeRun as (...args: unknown[]) => Promise<unknown>;
    const options = runOptions(store, model);
    const cases: [() => Promise<unknown>, string, RegExp][] = [
      [
        () => run(main, 5, options),
        "$.input",
        /a string, an array of input items or a RunState, got number/,
      ],
      [() => run(main, undefined, options), "$.input", /got undefined/],
      [() => run(main, { role: "user", content: "hi" }, options), "$.input", /got object/],
      [() => run(main, 5, { ...options, stream: true }), "$.input", /a RunState/],
      [() => run(main, [user("hi"), 5], options), "$.input[1]", /not an input item .* got number/],
      [() => run(main, [{ role: "user" }], options), "$.input[0]", /got \{ role \}/],
      [() => run(main, [null], options), "$.input[0]", /got null/],
      [() => run(null, "x", options), "$.agent", /runWithLedger needs an Agent .* got null/],
      [() => run({ name: "main" }, "x", options), "$.agent", /got object/],
      [() => resume(null, options), "$.agent", /resumeRun needs an Agent .* got null/],
      [() => resume("main", options), "$.agent", /got "main"/],
    ];
    for (const [call, path, message] of cases) {
      const failure = await call().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InvalidArgumentError);
      expect(failure).toMatchObject({ code: "invalid-argument", path });
      expect((failure as Error).message).toMatch(message);
    }
    expect(model.calls).toBe(0);
    expect(await readWholeSession(store, "s")).toEqual([]);
    expect((await inspectSession(store, "s")).runs).toEqual([]);
  });

  test("the input may be anything the SDK's run takes: a string, input items, a RunState", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture({ chargeNeedsApproval: true });
    const paused = await runWithLedger(main, [user("sell a book")], runOptions(store, model));
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    // Not in runWithLedger's type (resumeRun goes on with the ledger's record), but the SDK's.
    const run = runWithLedger as (...args: unknown[]) => Promise<{ status: string }>;
    const goneOn = await run(main, state, runOptions(store, model, "again"));
    expect(goneOn.status).toBe("completed");
  });
});
