import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveEvents } from "../compact/resolve.js";
import { hashJson } from "../events/canonical.js";
import type { JsonObject } from "../events/json.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { toAtif } from "../projections/to-atif.js";
import { readWholeRun } from "../store/read-all.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { memoryAndSqlite } from "./memory-and-sqlite.test.data.js";
import { SessionRecorder } from "./session-recorder.js";

// A user object with a `$ledger` key of its own is data: every payload the recorder writes must
// read back as given, never as the blob such an object seems to name (compact/marker.ts).

const dir = scratchDirectory("agent-ledger-verbatim-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "planner" };
const address = { sessionId: "s1", runId: "r1" };
const noBlob = `sha256:${"9".repeat(64)}`;

const stores = memoryAndSqlite(dir);

/** Objects shaped like every marker, one naming a blob the store holds. */
function tricky(realRef: string): JsonObject {
  return {
    pointsAtABlob: { $ledger: "json", ref: realRef },
    namesNoBlob: { $ledger: "text", ref: noBlob },
    looksEscaped: { $ledger: "escape", value: { a: 1 } },
    inAList: [{ $ledger: "list", ref: realRef }, { deeper: { $ledger: "json", ref: noBlob } }],
  };
}

describe.each(stores)("user objects with a $ledger key round-trip verbatim (%s)", (_, open) => {
  it("a run input shaped like a marker leaves a crashed run inspectable, resumable and exportable", async () => {
    const store = await open();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const input = { cfg: { $ledger: "json", ref: noBlob } };
    await recorder.startRun(input);
    await recorder.beforeToolCall({ name: "send_email", args: { to: "x" } });
    // The process dies here, with send_email in flight.
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.unresolved.map((attempt) => attempt.name)).toEqual(["send_email"]);
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    expect((await resumed.startRun(input)).payload).toEqual(input);
    const trajectory = await toAtif(store, address.sessionId);
    expect(trajectory.session_id).toBe(address.sessionId);
    await store.close();
  });

  it("every payload written outside model and tool calls reads back as given", async () => {
    const store = await open();
    const realRef = await store.putBlob(JSON.stringify({ note: "SECRET-OTHER-CONTENT" }));
    const value = tricky(realRef);
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun(value);
    await recorder.recordInput(value);
    await recorder.checkpoint(value);
    await recorder.record({ type: "x.note", payload: value });
    await recorder.completeRun(value);
    const read = await resolveEvents(store, await readWholeRun(store, address));
    expect(read.map((event) => event.payload)).toEqual([
      value,
      { input: value },
      value,
      value,
      { output: value },
    ]);
    expect((await inspectSession(store, address.sessionId)).runs[0]?.result).toEqual({
      output: value,
    });
    // The loop re-executed after a crash records the same things again: the recorded ones.
    for (const resolve of [true, false]) {
      const resumed = await SessionRecorder.resume({ store, ...address, actor, resolve });
      const started = await resumed.startRun(value);
      if (resolve) expect(started.payload).toEqual(value);
      expect((await resumed.recordInput(value)).seq).toBe(1);
      expect((await resumed.completeRun(value)).seq).toBe(4);
    }
    expect((await readWholeRun(store, address)).length).toBe(5);
    await store.close();
  });

  it("failures and reasons a redaction fills with such objects read back as given", async () => {
    const store = await open();
    const realRef = await store.putBlob(JSON.stringify({ note: "SECRET-OTHER-CONTENT" }));
    const value = tricky(realRef);
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      // A redaction that replaces what it removes with a description of its own.
      redact: (payload, { type }) => {
        if (type === "tool.failed") return { ...(payload as JsonObject), context: value };
        // The failure payload itself shaped like a marker: the recorder's own fields go inside.
        if (type === "model.failed")
          return { ...(payload as JsonObject), $ledger: "text", ref: noBlob };
        return type === "attempt.abandoned" ? { reason: value } : payload;
      },
    });
    await recorder.startRun();
    const failed = await recorder.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    await recorder.toolFailed(failed, new Error("boom"));
    const abandoned = await recorder.beforeToolCall({ toolCallId: "c2", name: "t", args: {} });
    await recorder.abandon(abandoned, "a person said so");
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    await recorder.modelFailed(model, new Error("cut"), { partial: { text: "he" } });
    const read = await resolveEvents(store, await readWholeRun(store, address));
    expect(read.at(-1)?.payload).toMatchObject({
      error: { name: "Error", message: "cut" },
      $ledger: "text",
      ref: noBlob,
      partial: { text: "he" },
    });
    const payloads = read.slice(-5, -2).map((event) => event.payload as JsonObject);
    expect(payloads[0]?.context).toEqual(value);
    expect(payloads[2]?.reason).toEqual(value);
    expect(payloads.map((payload) => payload.toolCallId)).toEqual(["c1", "c2", "c2"]);
    await store.close();
  });

  it("a `__proto__` key of a payload is data, kept as given through compaction and reads", async () => {
    const store = await open();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const given = JSON.parse('{"__proto__":{"$ledger":"json","ref":"x"},"y":2}');
    const attempt = await recorder.beforeToolCall({ name: "t", args: given });
    await recorder.toolCompleted(attempt, given);
    const [requested, completed] = (
      await resolveEvents(store, await readWholeRun(store, address))
    ).map((event) => event.payload as JsonObject);
    const read = [requested?.args, completed?.result];
    expect(read.map((value) => Object.keys(value as JsonObject))).toEqual([
      ["__proto__", "y"],
      ["__proto__", "y"],
    ]);
    expect(read.map((value) => hashJson(value))).toEqual([hashJson(given), hashJson(given)]);
    expect(requested?.requestHash).toBe(attempt.requestHash);
    await store.close();
  });

  it("collectBlobs leaves the session readable: such an object names no blob of the session", async () => {
    const store = await open();
    const ref = await store.putBlob(JSON.stringify({ note: "not the session's" }));
    const input = { cfg: { $ledger: "json", ref } };
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun(input);
    await recorder.beforeToolCall({ name: "send_email", args: { to: "x" } });
    await store.collectBlobs({ blobGraceMs: 0 });
    expect((await inspectSession(store, address.sessionId)).unresolved).toHaveLength(1);
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    expect((await resumed.startRun(input)).payload).toEqual(input);
    await store.close();
  });
});
