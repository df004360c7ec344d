import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

/** A decision recorded by the agent's recorder on a person's word names that person. */
describe("abandon and approve with { actor, metadata }", () => {
  async function inFlight() {
    const store = new MemoryEventStore();
    const agent = { type: "agent", id: "mailer" } as const;
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: agent });
    await recorder.startRun();
    const first = await recorder.beforeToolCall({ name: "send", args: { to: "a" } });
    const second = await recorder.beforeToolCall({ name: "send", args: { to: "b" } });
    return { store, recorder, agent, first, second };
  }

  it("records the person as the decision's actor, with its metadata; the recorder's actor otherwise", async () => {
    const { store, recorder, agent, first, second } = await inFlight();
    const person = { type: "human", id: "ops@example.com" } as const;
    const approved = await recorder.approve(first, "not sent", {
      actor: person,
      metadata: { via: "langgraph-interrupt" },
    });
    const abandoned = await recorder.abandon(second, "sent already");
    expect(approved).toMatchObject({ actor: person, metadata: { via: "langgraph-interrupt" } });
    expect(abandoned.actor).toEqual(agent);
    const stored = (await store.readRun({ sessionId: "s", runId: "r" })).events;
    expect(stored.find((event) => event.type === "attempt.approved")?.actor).toEqual(person);
  });

  it("refuses a bad actor with its path and writes nothing", async () => {
    const { store, recorder, first } = await inFlight();
    const before = (await store.readRun({ sessionId: "s", runId: "r" })).events.length;
    const bad = await recorder
      .abandon(first, "sent", { actor: { type: "robot", id: "x" } as never })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(LedgerError.isInstance(bad)).toBe(true);
    expect(bad).toMatchObject({ path: "$.options.actor.type" });
    const notOptions = await recorder.approve(first, "ok", "ops" as never).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(notOptions).toMatchObject({ code: "invalid-argument", path: "$.options" });
    expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toHaveLength(before);
    // The attempt is still open to a good decision.
    await expect(recorder.abandon(first, "sent")).resolves.toMatchObject({
      type: "attempt.abandoned",
    });
  });
});
