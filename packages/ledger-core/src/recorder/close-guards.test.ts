import { describe, expect, it } from "vitest";
import { readWholeRun } from "../store/read-all.js";
import type { SessionRecorder } from "./session-recorder.js";
import { startedRun } from "./started-run.test.data.js";

/** A started run, and the types of its events. */
async function started() {
  const { store, recorder } = await startedRun();
  const types = async () =>
    (await readWholeRun(store, { sessionId: "s", runId: "r" })).map((event) => event.type);
  return { store, recorder, types };
}

describe("guardClose", () => {
  it("has each way of closing the run wait for the guard, so a call still recorded gets its outcome first", async () => {
    const closes: [string, (recorder: SessionRecorder) => Promise<unknown>][] = [
      ["run.completed", (recorder) => recorder.completeRun("done")],
      ["run.failed", (recorder) => recorder.failRun(new Error("no"))],
      ["run.cancelled", (recorder) => recorder.cancelRun("stop")],
    ];
    for (const [type, close] of closes) {
      const { recorder, types } = await started();
      // A stream the framework still reads: its outcome comes a moment after the close is asked.
      const call = await recorder.beforeModelCall({ request: { prompt: "long" } });
      const seen: string[] = [];
      recorder.guardClose(async (closing) => {
        seen.push(closing);
        await new Promise((resolve) => setTimeout(resolve, 10));
        await recorder.modelCompleted(call, { text: "all of it" });
      });
      await close(recorder);
      expect(seen).toEqual([type]);
      expect((await types()).slice(-2)).toEqual(["model.completed", type]);
    }
  });

  it("refuses the close with the guard's error, nothing written, and takes it back when asked", async () => {
    const { recorder, types } = await started();
    const remove = recorder.guardClose(async () => {
      throw new Error("a stream of this run is still open");
    });
    await expect(recorder.completeRun("done")).rejects.toThrow("still open");
    expect(await types()).toEqual(["run.started"]);
    expect(recorder.status).toBe("running");
    remove();
    await recorder.completeRun("done");
    expect(await types()).toEqual(["run.started", "run.completed"]);
  });

  it("is refused for anything but a function", async () => {
    const { recorder } = await started();
    expect(() => recorder.guardClose("wait" as never)).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.guard" }),
    );
  });
});
