import { describe, expect, it } from "vitest";
import { inspectSession } from "../inspect/inspect-session.js";
import { startedRun } from "./started-run.test.data.js";

/** An SDK error whose message is computed when read, and throws. */
function lazyError(): Error {
  const error = new Error("x");
  Object.defineProperty(error, "message", {
    get() {
      throw new Error("getter boom");
    },
  });
  return error;
}

describe("a failure whose error cannot be read", () => {
  it("is still recorded: the call failed and the run is closed, nothing left in flight", async () => {
    const { store, recorder } = await startedRun();
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
    await recorder.toolFailed(tool, lazyError());
    const model = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    await recorder.modelFailed(model, { name: "ProviderError", message: Object.create(null) });
    await recorder.failRun(lazyError());
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs.map((run) => run.status)).toEqual(["failed"]);
    const statuses = inspection.runs[0]?.steps.flatMap((step) =>
      step.attempts.map((a) => a.status),
    );
    expect(statuses).toEqual(["failed", "failed"]);
  });
});
