import { MemoryEventStore } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { resumeAfterStop, type Shape } from "./testing/interrupt-resume.test.data.js";

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
      const fresh = await resumeAfterStop(new MemoryEventStore(), shape, "new-handler");
      const same = await resumeAfterStop(new MemoryEventStore(), shape, "same-handler");
      expect(fresh.interrupts).toBe(1);
      expect(fresh.sent).toEqual(["bob"]);
      expect(fresh.outcome).toEqual({ refused: "unresolved-attempt", name: refusedName });
      expect(same).toEqual(fresh);
    });

  it("other-task: the paused call runs again in its own step, and send is not run again", async () => {
    const fresh = await resumeAfterStop(new MemoryEventStore(), "other-task", "new-handler");
    const same = await resumeAfterStop(new MemoryEventStore(), "other-task", "same-handler");
    expect(fresh).toEqual({
      interrupts: 1,
      outcome: { answer: "done: sent to bob | yes" },
      sent: ["bob"],
      steps: { send: 1, confirm: 1 },
    });
    expect(same).toEqual(fresh);
  });
});

// A handler built on a recorder reopens it (`SessionRecorder.reopen`, with the caller's options)
// as a store's handler reopens its own: the resume on the same handler is served the same way.
describe("a graph resumed after interrupt() on a handler built on a recorder", () => {
  const shapes: Shape[] = ["same-step", "same-tool", "same-node", "other-task"];
  for (const shape of shapes)
    it(`${shape}: the same handler resumes it as a store's handler does, send not sent again`, async () => {
      const store = (resumedBy: "same-handler" | "new-handler") =>
        resumeAfterStop(new MemoryEventStore(), shape, resumedBy);
      const recorder = (resumedBy: "same-handler" | "new-handler") =>
        resumeAfterStop(new MemoryEventStore(), shape, resumedBy, { on: "recorder" });
      const same = await recorder("same-handler");
      expect(same.sent).toEqual(["bob"]);
      expect(same).toEqual(await store("same-handler"));
      expect(await recorder("new-handler")).toEqual(await store("new-handler"));
    });
});
