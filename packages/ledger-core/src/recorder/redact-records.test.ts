import { describe, expect, it } from "vitest";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

// `record` writes an adapter's or an application's own events (LangChain's chain inputs and
// outputs): the recorder's redaction applies to them as to every payload it writes.

const actor: Actor = { type: "agent", id: "a" };
const address = { sessionId: "s", runId: "r" };

describe("record() under a redaction", () => {
  it("removes the paths a list names from a custom event's payload", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor, redact: ["**.apiKey"] });
    await recorder.startRun();
    const stored = await recorder.record({
      type: "x.app.step",
      payload: { inputs: { apiKey: "sk-secret", question: "q" } },
    });
    expect(stored.payload).toEqual({ inputs: { apiKey: "[redacted]", question: "q" } });
    const events = await readWholeRun(store, address);
    expect(JSON.stringify(events)).not.toContain("sk-secret");
  });

  it("hands a function the event's type and stores what it returns", async () => {
    const store = new MemoryEventStore();
    const seen: string[] = [];
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: (payload, { type }) => {
        seen.push(type);
        return JSON.parse(JSON.stringify(payload).replaceAll("bob", "[someone]"));
      },
    });
    await recorder.startRun();
    await recorder.record({ type: "x.app.chain.end", payload: { outputs: ["bob says hi"] } });
    expect(seen).toContain("x.app.chain.end");
    const events = await readWholeRun(store, address);
    expect(JSON.stringify(events)).not.toContain("bob");
    expect(events.at(-1)?.payload).toEqual({ outputs: ["[someone] says hi"] });
  });
});
