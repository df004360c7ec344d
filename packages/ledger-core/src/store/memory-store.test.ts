import { describe, expect, it, vi } from "vitest";
import { runEventStoreConformance } from "../testing/conformance.js";
import { MemoryEventStore } from "./memory-store.js";

// The reference store runs the whole suite; nothing is skipped.
runEventStoreConformance(() => new MemoryEventStore(), { describe, it });

describe("MemoryEventStore at scale", () => {
  it("pages the session list without sorting every id for every page", async () => {
    // Each page sorted all the session ids: paging 100,000 sessions by 100 took 7 s.
    const store = new MemoryEventStore();
    const count = 1000;
    for (let index = count - 1; index >= 0; index--)
      await store.append({
        sessionId: `s${String(index).padStart(4, "0")}`,
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
    const sorts = vi.spyOn(Array.prototype, "sort");
    const seen: string[] = [];
    try {
      let after: string | undefined;
      for (;;) {
        const page = await store.listSessions({ ...(after ? { after } : {}), limit: 10 });
        for (const session of page.sessions) seen.push(session.sessionId);
        if (page.nextCursor === undefined) break;
        after = page.nextCursor;
      }
      expect(sorts.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      sorts.mockRestore();
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => `s${String(i).padStart(4, "0")}`));
    // A new session and a deleted one show on the next page read.
    await store.append({
      sessionId: "s0000a",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    await store.append({
      sessionId: "s0001",
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "run.completed" }],
    });
    await store.deleteSession("s0001");
    const page = await store.listSessions({ after: "s0000", limit: 2 });
    expect(page.sessions.map((session) => session.sessionId)).toEqual(["s0000a", "s0002"]);
    expect(page.nextCursor).toBe("s0002");
  });
});
