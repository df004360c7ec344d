import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { ms } from "./span-times.test.data.js";

describe("toOtelSpans retried attempts", () => {
  it("ends an attempt without outcome at its process's last event before the retry, not at the resume nor the session's end", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "retry", runId: "r", actor });
    await first.startRun();
    const read = await first.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    const note = await first.recordInput("still alive");
    // The process dies; a new one resumes the run later and retries the idempotent call.
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = await SessionRecorder.resume({ store, sessionId: "retry", runId: "r", actor });
    const again = await second.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    await second.toolCompleted(again, "v");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await second.completeRun("done");
    const events = await readWholeSession(store, "retry");
    const retryRequested = events.find(
      (event) => event.type === "tool.requested" && event.retryOf === read.attemptId,
    );
    const spans = await exportedSpans(store, "retry");
    const superseded = spans.find(
      (span) => span.attributes["agent_ledger.attempt.id"] === read.attemptId,
    );
    expect(superseded?.attributes["error.type"]).toBe("retried");
    // The dead process's last sign of life, not the resume 60 ms later: no call latency.
    expect(ms(superseded?.endTime as [number, number])).toBe(Date.parse(note.recordedAt));
    expect(Date.parse(retryRequested?.recordedAt ?? "")).toBeGreaterThan(
      Date.parse(note.recordedAt),
    );
  });

  it("ends two calls in flight together at the crash, not the second at the resume's retry of the first", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "parallel", runId: "r", actor });
    await first.startRun();
    const read = { kind: "read" as const, idempotent: true };
    const [a, b] = await Promise.all([
      first.beforeToolCall({ toolCallId: "a", name: "read", args: { n: 1 }, effect: read }),
      first.beforeToolCall({ toolCallId: "b", name: "read", args: { n: 2 }, effect: read }),
    ]);
    const events = await readWholeSession(store, "parallel");
    const crashAt = Date.parse(events[events.length - 1]?.recordedAt ?? "");
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = await SessionRecorder.resume({
      store,
      sessionId: "parallel",
      runId: "r",
      actor,
    });
    const againA = await second.beforeToolCall({
      toolCallId: "a",
      name: "read",
      args: { n: 1 },
      effect: read,
    });
    await second.toolCompleted(againA, 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const againB = await second.beforeToolCall({
      toolCallId: "b",
      name: "read",
      args: { n: 2 },
      effect: read,
    });
    await second.toolCompleted(againB, 2);
    const spans = await exportedSpans(store, "parallel");
    const endOf = (attemptId: string) =>
      ms(
        spans.find((span) => span.attributes["agent_ledger.attempt.id"] === attemptId)?.endTime as [
          number,
          number,
        ],
      );
    expect(endOf(a?.attemptId as string)).toBe(crashAt);
    expect(endOf(b?.attemptId as string)).toBe(crashAt);
  });

  it("ends a call a person abandoned after the crash at the crashed process's last event", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "abandoned", runId: "r", actor });
    await first.startRun();
    const pay = await first.beforeToolCall({ toolCallId: "p", name: "pay", args: {} });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const person = await SessionRecorder.resume({
      store,
      sessionId: "abandoned",
      runId: "r",
      actor: { type: "human", id: "oncall" },
      resolve: false,
    });
    await person.abandon(pay, "checked by hand: not paid");
    const spans = await exportedSpans(store, "abandoned");
    const span = spans.find((one) => one.attributes["agent_ledger.attempt.id"] === pay.attemptId);
    expect(span?.attributes["error.type"]).toBe("abandoned");
    const requested = (await readWholeSession(store, "abandoned")).find(
      (event) => event.eventId === pay.requestedEventId,
    );
    expect(ms(span?.endTime as [number, number])).toBe(Date.parse(requested?.recordedAt ?? ""));
  });
});
