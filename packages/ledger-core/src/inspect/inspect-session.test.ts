import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveEvents } from "../compact/resolve.js";
import { toAtif } from "../projections/to-atif.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { sessionWithDeletedRows } from "./deleted-rows.test.data.js";
import { type InspectOptions, inspectSession } from "./inspect-session.js";
import { verifyRun } from "./verify-run.js";

const folder = scratchDirectory("agent-ledger-inspect-", { beforeAll, afterAll });

describe("inspectSession on a fork", () => {
  it("keeps each run's copy of an attempt apart (a fork reuses the attemptIds)", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c", name: "charge", args: {} });
    await store.fork({ sessionId: "s", runId: "main", newRunId: "branch", uptoSeq: 2 });
    await recorder.toolCompleted(call, "charged");

    const inspection = await inspectSession(store, "s");
    const attemptOf = (runId: string) =>
      inspection.runs.find((run) => run.runId === runId)?.steps[0]?.attempts[0];
    expect(attemptOf("main")).toMatchObject({ status: "completed", outcome: "charged" });
    expect(attemptOf("branch")).toMatchObject({ attemptId: call.attemptId, status: "requested" });
    expect(inspection.unresolved.map((attempt) => attempt.runId)).toEqual(["branch"]);

    const atif = await toAtif(store, "s");
    expect(atif.extra).toMatchObject({ run_id: "main", unresolved_attempts: [] });
  });
});

/** A store that has lost one blob (`lost`). */
class LosingStore extends MemoryEventStore {
  lost: string | undefined;
  override async getBlobs(refs: string[]) {
    const found = await super.getBlobs(refs);
    if (this.lost !== undefined) found.delete(this.lost);
    return found;
  }
}

describe('inspectSession with resolve: "in-flight"', () => {
  /** A conversation of `turns` model calls (each request re-sends it), the last in flight. */
  async function conversation(turns: number, lastInFlight = true) {
    const store = new LosingStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const messages: { role: string; content: string }[] = [];
    let last: { request: unknown } | undefined;
    for (let turn = 0; turn < turns; turn++) {
      messages.push({ role: "user", content: `question ${turn} ${"lorem ipsum ".repeat(150)}` });
      const request = { model: "m", messages: [...messages] };
      const call = await recorder.beforeModelCall({ request });
      last = { request };
      if (lastInFlight && turn === turns - 1) break;
      const answer = { role: "assistant", content: `answer ${turn} ${"dolor sit ".repeat(150)}` };
      await recorder.modelCompleted(call, { message: answer });
      messages.push(answer);
    }
    return { store, lastRequest: last?.request };
  }

  it("resolves what a person decides on and keeps the other requests as stored: its JSON grows linearly", async () => {
    const { store, lastRequest } = await conversation(120);
    const full = await inspectSession(store, "s");
    const inFlight = await inspectSession(store, "s", { resolve: "in-flight" });
    // The call in flight, as sent; the answers, as received.
    expect(inFlight.unresolved[0]?.request).toEqual(lastRequest);
    const attempts = inFlight.runs[0]?.steps.map((step) => step.attempts[0]) ?? [];
    expect(attempts[0]?.outcome).toEqual(full.runs[0]?.steps[0]?.attempts[0]?.outcome);
    expect(JSON.stringify(attempts[0]?.outcome)).toContain("answer 0 dolor sit");
    // A request that got its answer: as stored, a reference to its message list.
    expect(JSON.stringify(attempts[1]?.request)).toContain('"$ledger":"list"');
    // Everything else is what the full inspection says.
    const shape = (inspection: typeof full) =>
      inspection.runs[0]?.steps.map((step) => step.attempts.map((attempt) => attempt.status));
    expect(shape(inFlight)).toEqual(shape(full));
    // 120 turns of 1.5 KB messages: the full JSON holds every request's whole conversation.
    const size = (value: unknown) => JSON.stringify(value).length;
    expect(size(full)).toBeGreaterThan(20_000_000);
    expect(size(inFlight)).toBeLessThan(size(full) / 15);
    // Twice the turns, about twice the JSON (the full inspection's grows four times).
    const half = await inspectSession((await conversation(60)).store, "s", {
      resolve: "in-flight",
    });
    expect(size(inFlight) / size(half)).toBeGreaterThan(1.5);
    expect(size(inFlight) / size(half)).toBeLessThan(2.5);
  });

  it("still says which blobs are lost, also those only a completed request names", async () => {
    // Nothing in flight: no request is resolved, yet a lost message text must be reported.
    const { store } = await conversation(3, false);
    const inspection = await inspectSession(store, "s", { resolve: "in-flight" });
    const [first] = inspection.runs[0]?.steps[0]?.attempts ?? [];
    // The first question's text, named only by the first (completed) request.
    const lost = /"ref":"(sha256:[0-9a-f]{64})"/.exec(JSON.stringify(first?.request))?.[1];
    expect(lost).toBeDefined();
    store.lost = lost;
    await expect(inspectSession(store, "s", { resolve: "in-flight" })).rejects.toMatchObject({
      code: "not-found",
    });
    const kept = await inspectSession(store, "s", {
      resolve: "in-flight",
      missingBlobs: "keep",
    });
    expect(kept.missingBlobs).toEqual([lost]);
  });

  it("reads no more blobs than the full inspection: an evidence record's attachment is not read", async () => {
    const { store } = await conversation(2);
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "a" },
    });
    const attachment = await store.putBlob("the contract, 40 pages");
    await recorder.recordEvidence({
      classification: "document",
      summary: "the contract",
      evidenceRefs: [attachment],
    });
    store.lost = attachment;
    // Neither mode reads it, so neither fails for it.
    await expect(inspectSession(store, "s")).resolves.toBeDefined();
    const inFlight = await inspectSession(store, "s", { resolve: "in-flight" });
    expect(inFlight.missingBlobs).toBeUndefined();
  });
});

describe("inspectSession on a run with rows missing", () => {
  it("marks a run whose seqs have a gap (what it shows of it is not what was recorded)", async () => {
    const store = await sessionWithDeletedRows(join(folder, "middle.db"), [2]);
    const inspection = await inspectSession(store, "s");
    const [main] = inspection.runs;
    // Read as stored, the run looks completed with its tool call in flight: the gap says why.
    expect(main).toMatchObject({
      runId: "main",
      status: "completed",
      seqGap: { after: 1, next: 3 },
    });
    expect(inspection.unresolved.map((attempt) => attempt.toolCallId)).toEqual(["c1"]);
    expect(main?.children[0]?.seqGap).toBeUndefined();
    for (const resolve of [false, "in-flight"] as const)
      expect((await inspectSession(store, "s", { resolve })).runs[0]?.seqGap).toEqual({
        after: 1,
        next: 3,
      });
    await store.close();
  });

  it("marks a run whose first events are missing, and only the first gap", async () => {
    const store = await sessionWithDeletedRows(join(folder, "start.db"), [0, 1, 3]);
    const [main] = (await inspectSession(store, "s")).runs;
    expect(main?.seqGap).toEqual({ after: -1, next: 2 });
    await store.close();
  });

  it("marks a closed run whose last events are missing, its end among them", async () => {
    // The payment's outcome and the run's end deleted: read alone, the rows say the payment is
    // in flight on a running run. The store still records the run as closed at 5 events.
    const store = await sessionWithDeletedRows(join(folder, "tail.db"), [2, 3, 4]);
    const inspection = await inspectSession(store, "s");
    const [main] = inspection.runs;
    expect(main).toMatchObject({ status: "running", length: 2, seqGap: { after: 1, next: 5 } });
    expect(inspection.unresolved.map((attempt) => attempt.toolCallId)).toEqual(["c1"]);
    expect(main?.children[0]).not.toHaveProperty("seqGap");
    for (const resolve of [false, "in-flight"] as const)
      expect((await inspectSession(store, "s", { resolve })).runs[0]?.seqGap).toEqual({
        after: 1,
        next: 5,
      });
    await store.close();
  });

  it("leaves an intact run unmarked", async () => {
    const store = await sessionWithDeletedRows(join(folder, "intact.db"), []);
    const [main] = (await inspectSession(store, "s")).runs;
    expect(main).not.toHaveProperty("seqGap");
    expect(main?.children[0]).not.toHaveProperty("seqGap");
    await store.close();
  });
});

describe("inspectSession's options", () => {
  it("refuses a value it does not know, naming the option, rather than reading it as the default", async () => {
    const store = new MemoryEventStore();
    for (const [options, path] of [
      [{ resolve: "bogus" }, "$.resolve"],
      [{ resolve: "false" }, "$.resolve"],
      [{ missingBlobs: "skip" }, "$.missingBlobs"],
      // A misspelt key read every blob of a long session it was told not to.
      [{ resolv: false }, "$.resolv"],
      [null, "$.options"],
    ] as const)
      await expect(
        inspectSession(store, "s", options as unknown as InspectOptions),
      ).rejects.toMatchObject({ code: "invalid-argument", path });
  });

  it("resolveEvents and verifyRun refuse an option they do not take, or a missingBlobs they do not know", async () => {
    const store = new MemoryEventStore();
    const loose = resolveEvents as (...args: unknown[]) => Promise<unknown>;
    for (const [options, path] of [
      [{ missingBlob: "keep" }, "$.missingBlob"],
      // Read as "throw" before: the lost blob failed the read it was to be kept through.
      [{ missingBlobs: "kep" }, "$.missingBlobs"],
      ["keep", "$.options"],
    ] as const)
      await expect(loose(store, [], options)).rejects.toMatchObject({
        code: "invalid-argument",
        path,
      });
    const address = { sessionId: "s", runId: "r" };
    await expect(
      verifyRun(store, address, { signl: AbortSignal.timeout(10) } as never),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.signl" });
  });
});
