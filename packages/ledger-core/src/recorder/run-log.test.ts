import { afterEach, describe, expect, it } from "vitest";
import { BlobCache } from "../compact/resolve.js";
import type { LedgerEvent } from "../events/types.js";
import { RUN_LOG_BUDGET_BYTES, RunLog, setRunLogBudget, storedSize } from "./run-log.js";

/** An event at `seq` as stored, its payload naming the blob `ref` (as compaction leaves it). */
function event(seq: number, ref = `sha256:${String(seq).padStart(64, "0")}`): LedgerEvent {
  return {
    seq,
    type: "tool.completed",
    payload: { result: { $ledger: "text", ref } },
    evidenceRefs: [ref],
  } as unknown as LedgerEvent;
}

const kib = (n: number, fill = "x") => fill.repeat(n * 1024);

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe("RunLog", () => {
  it("counts its events as stored and each blob's content once, and keeps them within the budget", () => {
    restore = setRunLogBudget(64 * 1024);
    const cache = new BlobCache();
    cache.bytes.set("loaded-blob", new Uint8Array(4096));
    const loaded = [event(0), event(1)];
    const log = RunLog.keep(loaded, cache, storedSize(loaded));
    if (!log) throw new Error("a small run is kept");
    expect(log.heldBytes).toBe(storedSize(loaded) + 4096);

    const written = event(2, "ref-2");
    log.wrote([written]);
    log.wroteBlobs(new Map([["ref-2", kib(8)]]));
    // Met again (an event naming it twice): held once.
    log.wroteBlobs(new Map([["ref-2", kib(8)]]));
    expect(log.heldBytes).toBe(storedSize([...loaded, written]) + 4096 + 8 * 1024);
    const kept = log.keptSoFar();
    expect(kept?.written).toEqual([written]);
    expect(kept?.loaded).toBe(loaded);
    expect(kept?.storedBytes).toBe(storedSize([...loaded, written]));
    // The committed content is in the cache the committed events resolve from.
    expect(new TextDecoder().decode(kept?.cache.bytes.get("ref-2"))).toBe(kib(8));
    expect(log.keptUpTo(3)).toBeDefined();
    expect(log.keptUpTo(4)).toBeUndefined();
  });

  it("is dropped once it holds more than the budget: it keeps no run, and holds nothing from then on", () => {
    const budget = 64 * 1024;
    restore = setRunLogBudget(budget);
    const loaded = [event(0)];
    const log = RunLog.keep(loaded, new BlobCache(), storedSize(loaded));
    if (!log) throw new Error("a small run is kept");
    let committed = 0;
    for (let seq = 1; seq <= 12; seq++) {
      log.wrote([event(seq, `ref-${seq}`)]);
      log.wroteBlobs(new Map([[`ref-${seq}`, kib(8, String(seq % 10))]]));
      committed += 8 * 1024;
      expect(log.heldBytes).toBeLessThanOrEqual(budget);
      // Kept whole while it fits, not at all past it.
      if (committed < budget - 8 * 1024) expect(log.keptSoFar()?.written).toHaveLength(seq);
    }
    expect(committed).toBeGreaterThan(budget);
    expect(log.heldBytes).toBe(0);
    expect(log.keptSoFar()).toBeUndefined();
    expect(log.keptUpTo(13)).toBeUndefined();
    // What it hears after that is not held either.
    log.wrote([event(13, "ref-13")]);
    log.wroteBlobs(new Map([["ref-13", kib(8)]]));
    expect(log.heldBytes).toBe(0);
    expect(log.keptSoFar()).toBeUndefined();
  });

  it("is not kept when the run it is made of is over the budget already, its blobs counted", () => {
    restore = setRunLogBudget(64 * 1024);
    const loaded = [event(0), event(1)];
    const cache = new BlobCache();
    cache.bytes.set("a", new Uint8Array(40 * 1024));
    expect(RunLog.keep(loaded, cache, storedSize(loaded))).toBeDefined();
    cache.bytes.set("b", new Uint8Array(40 * 1024));
    expect(RunLog.keep(loaded, cache, storedSize(loaded))).toBeUndefined();
  });

  it("measures an event as stored, its inline payload included, without serializing it", () => {
    const small = event(0);
    const inline = { ...small, payload: { result: kib(100) } } as LedgerEvent;
    expect(storedSize([inline]) - storedSize([small])).toBeGreaterThan(100 * 1024 - 100);
    expect(storedSize([small, inline])).toBe(storedSize([small]) + storedSize([inline]));
  });

  it("is back to its default budget once setRunLogBudget's restore is called", () => {
    const cache = new BlobCache();
    cache.bytes.set("a", new Uint8Array(1024 * 1024));
    const undo = setRunLogBudget(1024);
    expect(RunLog.keep([], cache, 0)).toBeUndefined();
    undo();
    expect(RunLog.keep([], cache, 0)?.heldBytes).toBe(1024 * 1024);
    cache.bytes.set("b", new Uint8Array(RUN_LOG_BUDGET_BYTES));
    expect(RunLog.keep([], cache, 0)).toBeUndefined();
  });
});
