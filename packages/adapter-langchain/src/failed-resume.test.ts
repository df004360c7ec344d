import {
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { abortedInsideSend, personDecides, RUN, SESSION } from "./testing/agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import { resumeAfterStop, type Shape } from "./testing/interrupt-resume.test.data.js";

/** `invoke`'s answer, or the code of the ledger error it stopped with. */
function settled(run: Promise<{ messages: { content: unknown }[] }>) {
  return run.then(
    (result) => ({ answer: String(result.messages.at(-1)?.content) }),
    (error: unknown) => {
      const refusal = findLedgerError(error);
      if (!refusal) throw error;
      return { refused: refusal.code };
    },
  );
}

/** Hides the person's name from everything recorded (a caller's redaction). */
function hideBob(payload: unknown) {
  return JSON.parse(JSON.stringify(payload).replaceAll("bob", "[someone]"));
}

// LangGraph runs again, from its checkpoint, the part of an invocation that failed: the calls
// recorded before the failure are met again, whichever handler resumes, and a handler built on a
// recorder (the caller's, with the caller's redaction) serves it as a store's handler does.
describe("a graph invoked again after an invocation that failed", () => {
  const shapes: Shape[] = ["same-step", "same-tool", "same-node", "other-task"];
  for (const shape of shapes)
    it(`${shape}: send, done before the failure, is not sent again, on any handler`, async () => {
      const run = (resumedBy: "same-handler" | "new-handler", on: "store" | "recorder" = "store") =>
        resumeAfterStop(new MemoryEventStore(), shape, resumedBy, { on, stop: "error" });
      const fresh = await run("new-handler");
      expect(fresh.failed).toContain("no one answered");
      expect(fresh.sent).toEqual(["bob"]);
      expect(await run("same-handler")).toEqual(fresh);
      expect(await run("same-handler", "recorder")).toEqual(fresh);
    });

  it("on a handler built on a recorder, the caller's redaction goes on", async () => {
    const store = new MemoryEventStore();
    const redacted = await resumeAfterStop(store, "same-step", "same-handler", {
      on: "recorder",
      stop: "error",
      redact: hideBob,
    });
    expect(redacted.sent).toEqual(["bob"]);
    expect(redacted.outcome).toEqual({ refused: "unresolved-attempt", name: "send" });
    // Every event, the chain events (the graph's inputs and outputs) too.
    const recorded = await readWholeRun(store, {
      sessionId: "interrupt-session",
      runId: "interrupt-run",
    });
    expect(JSON.stringify(recorded)).not.toContain("bob");
    expect(JSON.stringify(recorded)).toContain("[someone]");
  });
});

describe("an aborted invocation, invoked again on a handler built on a recorder", () => {
  it("refuses the call the abort cut off, then answers the person's decision, as a store's handler does", async () => {
    const store = new MemoryEventStore();
    const actor = { type: "agent", id: "mine" } as const;
    const given = new SessionRecorder({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor,
      redact: hideBob,
    });
    const { agent, handler, effects, block } = await abortedInsideSend(store, given);
    block(async () => {});
    expect(effects.send).toBe(1);

    expect(await settled(agent.invoke(null, threadConfig(handler)))).toEqual({
      refused: "unresolved-attempt",
    });
    expect(effects.send).toBe(1);
    await personDecides(store, "abandon", "the message went out");
    expect(await settled(agent.invoke(null, threadConfig(handler)))).toEqual({
      answer: expect.stringContaining("the message went out"),
    });
    expect(effects.send).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);

    // The handler goes on with a recorder reopened from the given one (its actor, its
    // redaction); the given one, which no longer knows where the run ends, refuses to write.
    const current = await handler.getRecorder();
    expect(current).not.toBe(given);
    expect(current.actor).toEqual(actor);
    await expect(given.record({ type: "x.note", payload: {} })).rejects.toMatchObject({
      code: "invalid-argument",
    });
    await current.checkpoint({ to: "bob" });
    // Every event, the chain events (the graph's inputs and outputs) too.
    const recorded = await readWholeRun(store, { sessionId: SESSION, runId: RUN });
    expect(JSON.stringify(recorded)).toContain("[someone]");
    expect(JSON.stringify(recorded)).not.toContain("bob");
  });
});
