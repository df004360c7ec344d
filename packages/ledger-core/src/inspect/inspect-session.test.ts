import { describe, expect, it } from "vitest";
import { toAtif } from "../projections/to-atif.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { inspectSession } from "./inspect-session.js";

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
