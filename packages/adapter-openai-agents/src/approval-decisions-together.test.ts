import { join } from "node:path";
import {
  type AppendRequest,
  findLedgerError,
  inspectSession,
  type JsonValue,
  type Redaction,
  readWholeSession,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "./index.js";
import { deletingAgent } from "./testing/approval-agents.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A person's decisions on several interruptions are one append or none: the first one recorded
// ends the run's pause for `agent-ledger inspect`, so a batch written in part would have it say
// that no call waits on a person while one still does.

const scratch = scratchDirectory("oa-decisions-together-", { beforeAll, afterAll });

/** A SQLite ledger whose appends are noted, in order. */
async function watchedLedger() {
  const store = new SqliteEventStore({ path: join(scratch, "decisions.db") });
  await store.init();
  onTestFinished(() => store.close());
  const appends: AppendRequest[] = [];
  const append = store.append.bind(store);
  store.append = (request) => {
    appends.push(request);
    return append(request);
  };
  return { store, appends };
}

/** A redaction that throws for the decision on `callId` and keeps everything else. */
function refusingDecisionOn(callId: string): Redaction {
  return (payload: JsonValue) => {
    if ((payload as { callId?: unknown } | null)?.callId === callId)
      throw new Error(`cannot redact the decision on ${callId}`);
    return payload;
  };
}

describe("a person's decisions on two interruptions", () => {
  test("one refused by the redact function: the resume fails with it, no decision is recorded, and the run is still paused at both; decided again, both are one append", async () => {
    const { store, appends } = await watchedLedger();
    const made = deletingAgent();
    const paused = await runWithLedger(made.agent, "clean up", runOptions(store, made.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map(approvalCallId)).toEqual(["call_a", "call_b"]);
    const before = await readWholeSession(store, "s");

    // /a approved, /b rejected; the decision on /b cannot be redacted.
    const [a, b] = paused.interruptions;
    if (!paused.state || !a || !b) throw new Error("expected two interruptions");
    paused.state.approve(a);
    paused.state.reject(b);
    const failed = await resumeRun(made.agent, {
      ...runOptions(store, made.model),
      state: paused.state,
      redact: refusingDecisionOn("call_b"),
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const refusal = findLedgerError(failed, "invalid-argument");
    expect(refusal?.path).toBe("$.redact");
    expect(refusal?.message).toContain("cannot redact the decision on call_b");

    // Neither decision is in the ledger, nothing ran, and the run still waits on both.
    const after = await readWholeSession(store, "s");
    expect(after.filter((event) => event.type === APPROVAL_EVENT_TYPE)).toEqual([]);
    expect(after).toEqual(before);
    expect(made.deleted).toEqual([]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.awaitingDecision?.calls.map((call) => call.toolCallId)).toEqual([
      "call_a",
      "call_b",
    ]);

    // Asked again (the ledger holds no decision), decided again with a redaction that works.
    const again = await resumeRun(made.agent, runOptions(store, made.model));
    expect(again.status).toBe("interrupted");
    expect(again.interruptions.map(approvalCallId)).toEqual(["call_a", "call_b"]);
    const [a2, b2] = again.interruptions;
    if (!again.state || !a2 || !b2) throw new Error("expected two interruptions");
    again.state.approve(a2);
    again.state.reject(b2);
    appends.length = 0;
    const done = await resumeRun(made.agent, {
      ...runOptions(store, made.model),
      state: again.state,
      redact: refusingDecisionOn("no such call"),
    });
    expect(done.status).toBe("completed");
    expect(made.deleted).toEqual(["/a"]);

    const withDecisions = appends.filter((request) =>
      request.events.some((event) => event.type === APPROVAL_EVENT_TYPE),
    );
    expect(withDecisions).toHaveLength(1);
    expect(
      withDecisions[0]?.events
        .filter((event) => event.type === APPROVAL_EVENT_TYPE)
        .map((event) => event.payload),
    ).toEqual([
      { callId: "call_a", toolName: "delete_file", approved: true },
      expect.objectContaining({ callId: "call_b", toolName: "delete_file", approved: false }),
    ]);
    const final = await inspectSession(store, "s");
    expect(final.runs[0]?.awaitingDecision).toBeUndefined();
    expect(final.unresolved).toEqual([]);
  });
});
