import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../events/types.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

// The README's recipe: a loop re-executed after its run was closed (the process died before
// its caller heard of the end) is answered from the ledger up to the recorded end. Its
// checkpoints stopped it with a bare "run main is completed and accepts no more events".

const scratch = scratchDirectory("closed-run-loop-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "me" };
const address = { sessionId: "s", runId: "main", actor };

async function openLedger(name: string) {
  const store = new SqliteEventStore({ path: join(scratch, `${name}.db`) });
  await store.init();
  return store;
}

/** The loop: an input, two turns of a model call and a checkpoint each, and the end. */
async function loop(recorder: SessionRecorder, paid: string[]) {
  await recorder.startRun({ task: "t" });
  await recorder.recordInput("plan");
  for (let turn = 0; turn < 2; turn++) {
    const call = await recorder.beforeModelCall({ request: { model: "m", turn } });
    if (call.replayed === undefined) {
      paid.push(`model ${turn}`);
      await recorder.modelCompleted(call, { content: `turn ${turn}` });
    }
    await recorder.checkpoint({ turn, at: Date.now() });
    await recorder.recordEvidence({
      key: "k",
      classification: "c",
      summary: `turn ${turn}`,
      evidenceRefs: [],
    });
  }
  return await recorder.completeRun({ answer: "done" });
}

describe("a loop re-executed on a run that was already closed", () => {
  it("is answered from the ledger to the recorded end, its checkpoints and evidence too, and writes nothing", async () => {
    const store = await openLedger("recipe");
    const paid: string[] = [];
    const end = await loop(new SessionRecorder({ store, ...address }), paid);
    const recorded = await readWholeRun(store, { sessionId: "s", runId: "main" });

    const resumed = await SessionRecorder.resume({ store, ...address });
    expect(resumed.status).toBe("completed");
    const again: string[] = [];
    expect(await loop(resumed, again)).toEqual(end);
    expect(again).toEqual([]);
    expect(paid).toEqual(["model 0", "model 1"]);
    expect(await readWholeRun(store, { sessionId: "s", runId: "main" })).toEqual(recorded);
    await store.close();
  });

  it("refuses a write the closed run did not record, saying it had ended before the resume", async () => {
    const store = await openLedger("more");
    await loop(new SessionRecorder({ store, ...address }), []);
    const recorded = await readWholeRun(store, { sessionId: "s", runId: "main" });
    const resumed = await SessionRecorder.resume({ store, ...address });
    await loop(resumed, []);
    const refusal = {
      code: "run-closed",
      name: "RunClosedError",
      details: { sessionId: "s", runId: "main", status: "completed" },
    };
    const words =
      /^run main had already completed when this recorder resumed it \(its run\.completed is seq \d+\): nothing was written/;
    // A third checkpoint: the recorded run has two.
    const checkpoint = resumed.checkpoint({ turn: 2 });
    await expect(checkpoint).rejects.toMatchObject(refusal);
    await expect(checkpoint).rejects.toThrow(words);
    await expect(checkpoint).rejects.toThrow("check recorder.status after SessionRecorder.resume");
    await expect(
      resumed.recordEvidence({ classification: "c", summary: "late", evidenceRefs: [] }),
    ).rejects.toThrow(words);
    await expect(resumed.record({ type: "x.note", payload: {} })).rejects.toThrow(words);
    expect(await readWholeRun(store, { sessionId: "s", runId: "main" })).toEqual(recorded);
    await store.close();
  });
});
