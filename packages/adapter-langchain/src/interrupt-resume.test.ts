import { MemoryEventStore } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { resumeAfterInterrupt, type Shape } from "./testing/interrupt-resume.test.data.js";

// A call recorded before the graph paused is answered from the ledger (or refused) when the
// graph resumes, whichever handler resumes it: the one that ran it, or a new process's.
describe("a graph resumed after interrupt(), on the same handler or a new one", () => {
  const shapes: { shape: Shape; refusedName: string }[] = [
    // The plain graph's callback cannot answer send: it stops, as README's plain graphs say.
    { shape: "same-step", refusedName: "send" },
    // send ran inside book: the refusal names book (README: a call made inside a tool).
    { shape: "same-tool", refusedName: "book" },
    { shape: "same-node", refusedName: "send" },
  ];
  for (const { shape, refusedName } of shapes)
    it(`${shape}: send, done before the pause, is not sent again when the same handler resumes`, async () => {
      const fresh = await resumeAfterInterrupt(new MemoryEventStore(), shape, "new-handler");
      const same = await resumeAfterInterrupt(new MemoryEventStore(), shape, "same-handler");
      expect(fresh.interrupts).toBe(1);
      expect(fresh.sent).toEqual(["bob"]);
      expect(fresh.outcome).toEqual({ refused: "unresolved-attempt", name: refusedName });
      expect(same).toEqual(fresh);
    });

  it("other-task: the paused call runs again in its own step, and send is not run again", async () => {
    const fresh = await resumeAfterInterrupt(new MemoryEventStore(), "other-task", "new-handler");
    const same = await resumeAfterInterrupt(new MemoryEventStore(), "other-task", "same-handler");
    expect(fresh).toEqual({
      interrupts: 1,
      outcome: { answer: "done: sent to bob | yes" },
      sent: ["bob"],
      steps: { send: 1, confirm: 1 },
    });
    expect(same).toEqual(fresh);
  });
});

// A handler built on a recorder cannot read its run again (the recorder, and its redaction, are
// the caller's): after a pause it refuses to serve the resume rather than run calls twice.
describe("a graph resumed after interrupt() on a handler built on a recorder", () => {
  it("is refused on the same handler, send not sent again; a new handler on a resumed recorder behaves as the store's", async () => {
    const same = await resumeAfterInterrupt(
      new MemoryEventStore(),
      "same-step",
      "same-handler",
      "recorder",
    );
    expect(same.sent).toEqual(["bob"]);
    expect(same.outcome).toEqual({ refused: "invalid-argument", path: "$.recorder" });
    const fresh = await resumeAfterInterrupt(
      new MemoryEventStore(),
      "same-step",
      "new-handler",
      "recorder",
    );
    expect(fresh).toEqual(
      await resumeAfterInterrupt(new MemoryEventStore(), "same-step", "new-handler"),
    );
  });
});
