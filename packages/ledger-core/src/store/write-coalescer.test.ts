import { describe, expect, it } from "vitest";
import { WriteCoalescer } from "./write-coalescer.js";

/** A flush whose batches the test finishes by hand, recording what each batch held. */
function manualFlush() {
  const batches: { items: number[]; finish(results: string[] | Error): void }[] = [];
  const flush = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({
        items,
        finish: (results) => (results instanceof Error ? reject(results) : resolve(results)),
      });
    });
  return { batches, flush };
}

/**
 * Lets the event loop turn twice: a batch answered now schedules what waits for the end of the
 * turn its answer is handled on.
 */
const tick = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe("WriteCoalescer", () => {
  it("starts a lone write at once, and gathers the writes that wait into one batch", async () => {
    const { batches, flush } = manualFlush();
    const coalescer = new WriteCoalescer(flush, { key: () => "s", maxInFlight: 2, maxBatch: 10 });
    const answers = [1, 2, 3, 4, 5].map((item) => coalescer.submit(item));
    // The first starts alone (nothing was running); the others go together once this turn of
    // the event loop is over.
    expect(batches.map((batch) => batch.items)).toEqual([[1]]);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4, 5]]);
    // Two batches run: a sixth waits until one of them is answered.
    answers.push(coalescer.submit(6));
    await tick();
    expect(batches).toHaveLength(2);
    batches[1]?.finish(["two", "three", "four", "five"]);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4, 5], [6]]);
    batches[0]?.finish(["one"]);
    batches[2]?.finish(["six"]);
    expect(await Promise.all(answers)).toEqual(["one", "two", "three", "four", "five", "six"]);
  });

  it("writers a batch answers go out together when they write again, not the first one alone", async () => {
    const { batches, flush } = manualFlush();
    const coalescer = new WriteCoalescer(flush, { key: () => "s", maxInFlight: 2, maxBatch: 10 });
    const again: Promise<string>[] = [];
    // Each writer writes again as soon as it is answered, as a recorder's next call does.
    const writer = (item: number) =>
      coalescer.submit(item).then((answer) => {
        again.push(coalescer.submit(item + 100));
        return answer;
      });
    const first = coalescer.submit(0);
    const answers = [1, 2, 3].map(writer);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[0], [1, 2, 3]]);
    // Batch [1, 2, 3] is answered while [0] still runs: a slot is free, yet the three writers'
    // next writes share one batch instead of the first taking the slot alone.
    batches[1]?.finish(["a", "b", "c"]);
    expect(await Promise.all(answers)).toEqual(["a", "b", "c"]);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[0], [1, 2, 3], [101, 102, 103]]);
    batches[0]?.finish(["zero"]);
    batches[2]?.finish(["x", "y", "z"]);
    expect(await first).toBe("zero");
    expect(await Promise.all(again)).toEqual(["x", "y", "z"]);
  });

  it("balanced: a batch takes at most its share of what runs and waits, so two slots take turns", async () => {
    const batchesOf = async (balanced: boolean) => {
      const { batches, flush } = manualFlush();
      const coalescer = new WriteCoalescer(flush, {
        key: () => "s",
        maxInFlight: 2,
        maxBatch: 64,
        balanced,
      });
      const answers = [0, 1, 2, 3, 4, 5, 6, 7].map((item) => coalescer.submit(item));
      await tick();
      batches[0]?.finish(["a"]);
      await tick();
      for (const batch of batches.slice(1)) batch.finish(batch.items.map(String));
      await Promise.all(answers);
      return batches.map((batch) => batch.items);
    };
    // A lone write still starts at once. Then 8 writes (1 running, 7 waiting) over 2 slots:
    // a batch of 4, and the 3 left once the first slot is free.
    expect(await batchesOf(true)).toEqual([[0], [1, 2, 3, 4], [5, 6, 7]]);
    // Unbalanced, the 7 went together, and the next round would find them in one batch again.
    expect(await batchesOf(false)).toEqual([[0], [1, 2, 3, 4, 5, 6, 7]]);
  });

  it("caps a batch at maxBatch and keeps the rest for the next", async () => {
    const { batches, flush } = manualFlush();
    const coalescer = new WriteCoalescer(flush, { key: () => "s", maxInFlight: 1, maxBatch: 2 });
    const answers = [1, 2, 3, 4].map((item) => coalescer.submit(item));
    batches[0]?.finish(["a"]);
    await tick();
    batches[1]?.finish(["b", "c"]);
    await tick();
    batches[2]?.finish(["d"]);
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4]]);
    expect(await Promise.all(answers)).toEqual(["a", "b", "c", "d"]);
  });

  it("rejects every write of a failed batch, and goes on with the next", async () => {
    const { batches, flush } = manualFlush();
    const coalescer = new WriteCoalescer(flush, { key: () => "s", maxInFlight: 1, maxBatch: 10 });
    const first = coalescer.submit(1);
    const waiting = [2, 3].map((item) => coalescer.submit(item).catch((error: Error) => error));
    batches[0]?.finish(["a"]);
    await tick();
    const failure = new Error("connection lost");
    batches[1]?.finish(failure);
    expect(await first).toBe("a");
    expect(await Promise.all(waiting)).toEqual([failure, failure]);
    const later = coalescer.submit(4);
    batches[2]?.finish(["d"]);
    expect(await later).toBe("d");
  });

  it("a flush that throws instead of rejecting fails its batch only", async () => {
    let calls = 0;
    const coalescer = new WriteCoalescer(
      (items: number[]) => {
        calls++;
        if (calls === 1) throw new Error("thrown");
        return Promise.resolve(items.map((item) => item * 10));
      },
      { key: () => "s", maxInFlight: 1, maxBatch: 10 },
    );
    await expect(coalescer.submit(1)).rejects.toThrow("thrown");
    expect(await coalescer.submit(2)).toBe(20);
  });

  it("writes of different keys never wait for each other nor share a batch", async () => {
    const { batches, flush } = manualFlush();
    const coalescer = new WriteCoalescer(flush, {
      key: (item: number) => (item < 10 ? "a" : "b"),
      maxInFlight: 1,
      maxBatch: 10,
    });
    const answers = [1, 11, 2, 12, 3].map((item) => coalescer.submit(item));
    // One of each key runs; the others wait behind their own key only.
    expect(batches.map((batch) => batch.items)).toEqual([[1], [11]]);
    batches[1]?.finish(["b1"]);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [11], [12]]);
    batches[0]?.finish(["a1"]);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [11], [12], [2, 3]]);
    batches[2]?.finish(["b2"]);
    batches[3]?.finish(["a2", "a3"]);
    expect(await Promise.all(answers)).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });
});
