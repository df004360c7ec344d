import { describe, expect, it } from "vitest";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

// What a resume gives back of an outcome a redaction changed: the stored value, not the live one
// (the README's "After a crash").

const actor: Actor = { type: "agent", id: "a" };
const address = { sessionId: "s", runId: "r" };
const redact = ["**.ssn"];
const customer = { id: "c1", ssn: "123-45-6789" };

/** A run whose tool returned `customer`, then a model call whose request carries it (`asText`: as JSON text). */
async function recorded(store: MemoryEventStore, asText: boolean) {
  const recorder = new SessionRecorder({ store, ...address, actor, redact });
  await recorder.startRun();
  const tool = await recorder.beforeToolCall({ toolCallId: "t1", name: "customer", args: {} });
  await recorder.toolCompleted(tool, customer);
  const result = asText ? JSON.stringify(customer) : customer;
  await recorder.modelCompleted(await recorder.beforeModelCall({ request: { result } }), {
    text: "ok",
  });
}

describe("a resumed run whose outcomes were redacted", () => {
  it("answers the tool call with the redacted value, and the model call whose request holds it as JSON", async () => {
    const store = new MemoryEventStore();
    await recorded(store, false);
    const resumed = await SessionRecorder.resume({ store, ...address, actor, redact });
    const tool = await resumed.beforeToolCall({ toolCallId: "t1", name: "customer", args: {} });
    const answer = tool.replayed?.status === "completed" ? tool.replayed.result : undefined;
    expect(answer).toEqual({ id: "c1", ssn: "[redacted]" });
    // The re-executed agent puts what it was given into its next request; redacted again, it
    // asks what the recorded call asked.
    const model = await resumed.beforeModelCall({ request: { result: answer ?? null } });
    expect(model.replayed?.status).toBe("completed");
  });

  it("stops at a model call whose request held the value inside a string", async () => {
    const store = new MemoryEventStore();
    await recorded(store, true);
    const events = await store.readSession({ sessionId: "s" });
    // The path does not reach into JSON text: the value is in the ledger.
    expect(JSON.stringify(events.events)).toContain("123-45-6789");
    const resumed = await SessionRecorder.resume({ store, ...address, actor, redact });
    const tool = await resumed.beforeToolCall({ toolCallId: "t1", name: "customer", args: {} });
    const answer = tool.replayed?.status === "completed" ? tool.replayed.result : undefined;
    await expect(
      resumed.beforeModelCall({ request: { result: JSON.stringify(answer) } }),
    ).rejects.toMatchObject({ code: "replay-divergence" });
  });
});
