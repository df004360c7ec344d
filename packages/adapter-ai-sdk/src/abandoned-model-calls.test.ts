import { inspectSession, LedgerError, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import {
  FAILING_STREAM_RUN,
  finalStep,
  runFailingStream,
  streamingModel,
} from "./testing/failing-stream.test.data.js";
import { crashedLedgers } from "./testing/research-ledger.test.data.js";
import { assistant as actor } from "./testing/scripted-model.test.data.js";

// A model call a crash left in flight needs no decision (a resume makes it again), and
// `agent-ledger resolve` refuses one; a ledger whose model call was abandoned anyway (by
// `recorder.abandon`, or by the CLI before it refused) stops the resumed run with a coded
// LedgerError that says what to do, not an uncoded AttemptAbandonedError.

const crashed = crashedLedgers("ai-sdk-abandoned-model-");

describe("a model call a person abandoned, on resume", () => {
  it("stops the run with replay-divergence, saying what to do, and calls no provider", async () => {
    const store = await crashed("stream failed mid-way, then inside step 2");
    const [inFlight] = (await inspectSession(store, FAILING_STREAM_RUN.sessionId)).unresolved;
    expect(inFlight?.kind).toBe("model");
    const person = await SessionRecorder.resume({
      store,
      ...FAILING_STREAM_RUN,
      actor: { type: "human", id: "ops" },
    });
    await person.abandon(inFlight!, "provider outage");

    const model = streamingModel([finalStep()]);
    const resumed = await runFailingStream(
      await SessionRecorder.resume({ store, ...FAILING_STREAM_RUN, actor }),
      model.model,
    );
    expect(model.calls).toBe(0);
    const refusal = resumed.errors.find((error) => LedgerError.isInstance(error));
    expect(LedgerError.isInstance(refusal, "replay-divergence")).toBe(true);
    expect((refusal as LedgerError).details).toMatchObject({
      attemptId: inFlight?.attemptId,
      reason: "provider outage",
    });
    expect((refusal as LedgerError).message).toContain("recorder.failRun");
    expect((refusal as LedgerError).message).toContain("agent-ledger inspect stream");
  });
});
