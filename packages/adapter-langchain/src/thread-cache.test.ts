import { MemoryEventStore } from "@agent-ledger/core";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";

/** A memory store whose appends to one run wait for `release()`; it notes fresh loads. */
class GatedStore extends MemoryEventStore {
  readonly loads: string[] = [];
  gatedRun: string | undefined;
  #open: () => void = () => {};
  #gate = new Promise<void>((resolve) => {
    this.#open = resolve;
  });

  release(): void {
    this.#open();
  }

  override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
    if (request.runId === this.gatedRun) await this.#gate;
    return super.append(request);
  }

  override async readRun(request: Parameters<MemoryEventStore["readRun"]>[0]) {
    if (!request.fromSeq) this.loads.push(request.runId);
    return super.readRun(request);
  }
}

const metadata = { source: "input", step: -1, parents: {} } as const;

describe("ThreadLogCache", () => {
  it("never evicts a thread while a put is in flight on it, however many other threads are used", async () => {
    const store = new GatedStore();
    const saver = new LedgerCheckpointSaver({ store, cachedThreads: 1 });
    store.gatedRun = "thread:busy";
    const first = { ...emptyCheckpoint(), id: uuid6(0) };
    const pending = saver.put({ configurable: { thread_id: "busy" } }, first, metadata, {});
    for (const threadId of ["b", "c", "d"])
      await saver.put({ configurable: { thread_id: threadId } }, emptyCheckpoint(), metadata, {});
    store.release();
    const config = await pending;

    // The same log goes on from where the put left it: no second load of the thread.
    const second = { ...emptyCheckpoint(), id: uuid6(1) };
    await saver.put(config, second, { ...metadata, step: 0 }, {});
    expect(store.loads.filter((runId) => runId === "thread:busy")).toEqual(["thread:busy"]);
    const ids = [];
    for await (const tuple of saver.list({ configurable: { thread_id: "busy" } }))
      ids.push(tuple.checkpoint.id);
    expect(ids).toEqual([second.id, first.id]);
  });
});
