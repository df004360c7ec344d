import { describe, expect, it } from "vitest";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

// A recorder resumed with `resolve: false` (a tool that only decides, as `agent-ledger resolve`)
// reads its run as stored, and its children theirs: nothing is fetched, not even the run's last
// message list, so a missing or unreadable blob in a child run does not stop a person's
// decision there (agent-ledger resolve --abandon settling the calls inside a tool call).

const agent: Actor = { type: "agent", id: "main" };
const sub: Actor = { type: "agent", id: "sub" };
const person: Actor = { type: "human", id: "ops" };

class BlobReads extends MemoryEventStore {
  reads = 0;
  override async getBlob(ref: string) {
    this.reads++;
    return super.getBlob(ref);
  }
  override async getBlobs(refs: string[]) {
    this.reads++;
    return super.getBlobs(refs);
  }
}

describe("a child of a recorder resumed with resolve: false", () => {
  it("loads its run as stored, reading no blob", async () => {
    const store = new BlobReads();
    const main = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: agent });
    await main.startRun();
    const inner = main.child({ actor: sub });
    await inner.startRun();
    const long = "a long message that the recorder keeps in a blob ".repeat(200);
    const attempt = await inner.beforeModelCall({
      request: { model: "m", messages: [{ role: "user", content: long }] },
    });
    await inner.modelCompleted(attempt, { role: "assistant", content: long });

    store.reads = 0;
    const decider = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor: person,
      resolve: false,
    });
    const child = decider.child({ runId: inner.runId, actor: person });
    await child.startRun();
    expect(child.length).toBe(3);
    expect(store.reads).toBe(0);
  });
});
