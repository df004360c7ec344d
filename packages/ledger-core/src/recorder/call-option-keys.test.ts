import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

/** A misspelt key of a call's options: refused at its path, the ledger left as it was. */
describe("a key a recorder call does not take", () => {
  it("is invalid-argument at its path, for before*, abandon and approve, and nothing is written", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const tool = await recorder.beforeToolCall({ name: "send", args: {}, toolCallId: "c0" });
    const before = await readWholeSession(store, "s");
    const loose = recorder as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const cases: [string, () => Promise<unknown>, string, RegExp][] = [
      [
        // Without its id, a resume matched the call by name and order only.
        "beforeToolCall toolCallID",
        () => loose.beforeToolCall!.call(recorder, { name: "send", args: {}, toolCallID: "c1" }),
        "$.toolCallID",
        /beforeToolCall has no option "toolCallID" \(its options: stepId, toolCallId, name/,
      ],
      [
        // Recorded as of unknown effect, a write a resume would not know to hold back.
        "beforeToolCall efect",
        () => loose.beforeToolCall!.call(recorder, { name: "send", args: {}, efect: {} }),
        "$.efect",
        /has no option "efect"/,
      ],
      [
        "beforeModelCall requests",
        () => loose.beforeModelCall!.call(recorder, { request: {}, requests: [] }),
        "$.requests",
        /beforeModelCall has no option "requests"/,
      ],
      [
        // A person's decision recorded as the agent's.
        "abandon author",
        () => loose.abandon!.call(recorder, tool, "no", { author: { type: "human", id: "u" } }),
        "$.options.author",
        /abandon has no option "author"/,
      ],
      [
        "approve by",
        () => loose.approve!.call(recorder, tool, "yes", { by: "u" }),
        "$.options.by",
        /approve has no option "by"/,
      ],
    ];
    for (const [label, call, path, message] of cases) {
      const error = await call().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), `${label}: ${error}`).toBe(true);
      expect((error as LedgerError).path, label).toBe(path);
      expect((error as LedgerError).message, label).toMatch(message);
    }
    expect(await readWholeSession(store, "s")).toEqual(before);
    // The same calls spelt right are taken.
    await recorder.abandon(tool, "no", { actor: { type: "human", id: "u" } });
    const model = await recorder.beforeModelCall({ request: {}, metadata: { turn: 1 } });
    expect(model.kind).toBe("model");
  });
});
