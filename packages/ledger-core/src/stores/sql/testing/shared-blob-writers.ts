import { expect } from "vitest";
import { sha256Hex } from "../../../events/canonical.js";
import { computeEventHash } from "../../../events/hash-chain.js";
import type { LedgerEvent } from "../../../events/types.js";
import type { EventStore } from "../../../store/event-store.js";

/** Every stored event reads back exactly as its writer got it, chains verify, cursors are 1..n. */
export async function checkSession(
  store: EventStore,
  sessionId: string,
  written: LedgerEvent[],
): Promise<void> {
  const stored = (await store.readSession({ sessionId })).events;
  expect(stored.map((stored) => stored.commitCursor)).toEqual(
    Array.from({ length: stored.length }, (_, index) => index + 1),
  );
  const byId = new Map(stored.map((stored) => [stored.eventId, stored]));
  for (const mine of written)
    expect(JSON.stringify(byId.get(mine.eventId))).toBe(JSON.stringify(mine));
  for (const runId of new Set(stored.map((stored) => stored.runId))) {
    const run = stored.filter((stored) => stored.runId === runId);
    expect(run.map((stored) => stored.seq)).toEqual(run.map((_, index) => index));
    run.forEach((stored, index) => {
      expect(stored.prevHash).toBe(index === 0 ? null : run[index - 1]?.hash);
      expect(computeEventHash(stored)).toBe(stored.hash);
    });
  }
}

/**
 * Sixteen runs over four sessions (`label` names them, and must be fresh), each store of two
 * writing half the runs of every session, so both stores' statements (scripts) take the
 * session rows (keys) of the same sessions.
 */
export function sixteenWriters(stores: EventStore[], label: string) {
  return Array.from({ length: 16 }, (_, writer) => ({
    store: stores[writer % 2] as EventStore,
    sessionId: `${label}-${writer % 4}`,
    runId: `run-${writer}`,
  }));
}

/**
 * Sixteen writers through two stores on four sessions, eleven appends each after its run's
 * start, every append carrying three blobs every writer carries (in an order that varies) and
 * one of its own: each append is written once, chains and cursors hold, every blob is kept and
 * a collection with no grace deletes none of them.
 */
export async function checkSharedBlobWriters(stores: EventStore[], label: string): Promise<void> {
  const writers = sixteenWriters(stores, label);
  const text = (name: string) => `${name} ${label} ${"words ".repeat(30)}`;
  const shared = [text("prompt"), text("tools"), text("policy")];
  const refOf = (content: string) => `sha256:${sha256Hex(content)}`;
  const written: LedgerEvent[] = [];
  const own: string[] = [];
  for (const writer of writers) {
    const started = await (stores[0] as EventStore).append({
      sessionId: writer.sessionId,
      runId: writer.runId,
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    written.push(...started.events);
  }
  await Promise.all(
    writers.map(async (writer, index) => {
      for (let step = 1; step < 12; step++) {
        const mine = text(`run ${index} step ${step}`);
        own.push(mine);
        const carried = [...shared.slice(step % 3), ...shared.slice(0, step % 3), mine];
        const result = await writer.store.append({
          sessionId: writer.sessionId,
          runId: writer.runId,
          expectedSeq: step,
          events: [{ type: "x.named", evidenceRefs: carried.map(refOf) }],
          blobs: index % 2 === 0 ? carried : carried.reverse(),
        });
        expect(result.deduplicated).toBe(false);
        written.push(...result.events);
      }
    }),
  );
  for (const content of [...shared, ...own])
    expect(new TextDecoder().decode(await stores[1]?.getBlob(refOf(content)))).toBe(content);
  for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
    const mine = written.filter((stored) => stored.sessionId === sessionId);
    expect(mine).toHaveLength(48);
    await checkSession(stores[0] as EventStore, sessionId, mine);
  }
  expect(await stores[0]?.collectBlobs?.({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
}
