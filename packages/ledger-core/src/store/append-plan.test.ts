import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { computeEventHash, writerContent } from "../events/hash-chain.js";
import type { LedgerEvent, NewEvent, RunHead } from "../events/types.js";
import { type AppendPlan, assignCursors, EMPTY_HEAD, planAppend, planFork } from "./append-plan.js";
import { validateAppend } from "./validate.js";

const now = "2026-11-29T08:00:00.000Z";
const address = { sessionId: "s", runId: "r" };

function plan(
  events: NewEvent[],
  options: { head?: RunHead; existing?: LedgerEvent[]; expectedSeq?: number } = {},
): AppendPlan {
  const request = validateAppend({ ...address, expectedSeq: options.expectedSeq ?? 0, events });
  return planAppend({
    request,
    head: options.head ?? EMPTY_HEAD,
    existing: options.existing ?? [],
    now,
  });
}

function written(events: NewEvent[], first = 1): LedgerEvent[] {
  const result = plan(events);
  if (result.kind !== "write") throw new Error("expected a write");
  return assignCursors(result.events, first);
}

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    if (LedgerError.isInstance(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe("planAppend", () => {
  it("plans seq, the hash chain and the new head", () => {
    const result = plan([
      { eventId: "a", type: "run.started" },
      { eventId: "b", type: "x.note", payload: { n: 1 } },
    ]);
    expect(result.kind).toBe("write");
    if (result.kind !== "write") return;
    expect(result.events.map((event) => [event.seq, event.recordedAt])).toEqual([
      [0, now],
      [1, now],
    ]);
    expect(result.events[0]?.prevHash).toBeNull();
    expect(result.events[1]?.prevHash).toBe(result.events[0]?.hash);
    for (const event of result.events) expect(computeEventHash(event)).toBe(event.hash);
    expect(result.head).toEqual({
      exists: true,
      length: 2,
      status: "running",
      lastHash: result.events[1]?.hash,
    });
  });

  it("continues from a head and closes the run with a terminal event", () => {
    const head: RunHead = { exists: true, length: 3, status: "running", lastHash: "h" };
    const result = plan([{ eventId: "t", type: "run.cancelled" }], { head, expectedSeq: 3 });
    if (result.kind !== "write") throw new Error("expected a write");
    expect(result.events[0]).toMatchObject({ seq: 3, prevHash: "h" });
    expect(result.head.status).toBe("cancelled");
  });

  it("checks in order: terminal not last, retry of a stored batch, duplicate-event, run-closed, conflict", () => {
    const stored = written([
      { eventId: "a", type: "run.started" },
      { eventId: "b", type: "run.completed" },
    ]);
    const closed: RunHead = {
      exists: true,
      length: 2,
      status: "completed",
      lastHash: stored[1]!.hash,
    };
    const retry = plan([{ eventId: "b", type: "run.completed" }], {
      head: closed,
      existing: [stored[1]!],
      expectedSeq: 1,
    });
    expect(retry).toEqual({ kind: "deduplicated", events: [stored[1]] });
    expect(
      code(() =>
        plan([{ eventId: "b", type: "x.other" }], {
          head: closed,
          existing: [stored[1]!],
          expectedSeq: 0,
        }),
      ),
    ).toBe("duplicate-event");
    expect(
      code(() => plan([{ eventId: "c", type: "x.note" }], { head: closed, expectedSeq: 0 })),
    ).toBe("run-closed");
    const open: RunHead = { exists: true, length: 2, status: "running", lastHash: "h" };
    expect(code(() => plan([{ eventId: "c", type: "x.n" }], { head: open, expectedSeq: 1 }))).toBe(
      "conflict",
    );
    // A batch that closes the run before its end is refused for what it is, first: at a stale
    // position, and holding an id stored with other content.
    expect(
      code(() =>
        plan(
          [
            { eventId: "c", type: "run.completed" },
            { eventId: "d", type: "x.n" },
          ],
          { head: open, expectedSeq: 1 },
        ),
      ),
    ).toBe("run-closed");
    expect(
      code(() =>
        plan(
          [
            { eventId: "c", type: "run.completed" },
            { eventId: "b", type: "x.n" },
          ],
          { head: closed, existing: [stored[1]!], expectedSeq: 2 },
        ),
      ),
    ).toBe("run-closed");
    expect(
      code(() =>
        plan(
          [
            { eventId: "c", type: "run.completed" },
            { eventId: "d", type: "x.n" },
          ],
          { head: open, expectedSeq: 2 },
        ),
      ),
    ).toBe("run-closed");
  });

  it("reports the conflict's actualSeq and the clashing event's path", () => {
    const head: RunHead = { exists: true, length: 5, status: "running", lastHash: "h" };
    try {
      plan([{ type: "x.note" }], { head, expectedSeq: 2 });
      throw new Error("accepted");
    } catch (error) {
      expect(error).toMatchObject({ code: "conflict", actualSeq: 5, expectedSeq: 2 });
    }
    const stored = written([{ eventId: "a", type: "x.note" }]);
    const other = { ...stored[0]!, runId: "other-run" };
    try {
      plan(
        [
          { eventId: "n", type: "x.note" },
          { eventId: "a", type: "x.note" },
        ],
        { existing: [other] },
      );
      throw new Error("accepted");
    } catch (error) {
      expect(error).toMatchObject({
        code: "duplicate-event",
        path: "$.events[1].eventId",
        eventId: "a",
      });
    }
  });
});

describe("writerContent", () => {
  it("ignores key order and store-assigned fields, covers everything a writer sends", () => {
    const [event] = written([
      { eventId: "a", type: "x.note", payload: { b: 1, a: 2 }, stepId: "s" },
    ]);
    const base = writerContent(event!);
    expect(
      writerContent({ ...event!, payload: { a: 2, b: 1 }, seq: 9, recordedAt: "x", hash: "y" }),
    ).toBe(base);
    for (const change of [
      { payload: { a: 2 } },
      { stepId: "t" },
      { type: "x.other" },
      { metadata: {} },
      { actor: { type: "agent", id: "a" } },
    ]) {
      expect(writerContent({ ...event!, ...change } as LedgerEvent)).not.toBe(base);
    }
  });
});

describe("planFork", () => {
  it("copies with new ids, remaps causes inside the prefix, keeps outside ones, rebuilds the chain", () => {
    const source = written([
      { eventId: "a", type: "run.started", causedByEventId: "outside" },
      { eventId: "b", type: "model.requested", causedByEventId: "a" },
      { eventId: "c", type: "run.failed", causedByEventId: "b" },
    ]);
    let counter = 0;
    const fork = planFork({
      sessionId: "s",
      newRunId: "f",
      source,
      newEventId: () => `new-${++counter}`,
      now,
    });
    expect(
      fork.events.map((event) => [event.eventId, event.runId, event.seq, event.causedByEventId]),
    ).toEqual([
      ["new-1", "f", 0, "outside"],
      ["new-2", "f", 1, "new-1"],
      ["new-3", "f", 2, "new-2"],
    ]);
    expect(fork.events[0]?.prevHash).toBeNull();
    for (const event of fork.events) expect(computeEventHash(event)).toBe(event.hash);
    expect(fork.head).toEqual({
      exists: true,
      length: 3,
      status: "failed",
      lastHash: fork.events[2]?.hash,
    });
  });

  it("assignCursors numbers from the first cursor", () => {
    expect(
      written([{ type: "x.a" }, { type: "x.b" }], 7).map((event) => event.commitCursor),
    ).toEqual([7, 8]);
  });
});
