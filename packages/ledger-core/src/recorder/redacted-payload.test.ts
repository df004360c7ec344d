import { describe, expect, it } from "vitest";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import type { Redaction } from "./redact.js";
import { SessionRecorder } from "./session-recorder.js";

// `redactedPayload` hands an adapter the recorder's redaction of a value it stores where the
// recorder does not redact (metadata): what a framework told its model of a failed tool quotes
// the error the failure's payload has redacted.

const actor: Actor = { type: "agent", id: "a" };

function recorderWith(redact?: Redaction) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor,
    ...(redact !== undefined ? { redact } : {}),
  });
  return { store, recorder };
}

const FAILED = {
  error: { name: "Error", message: "declined sk-secret" },
  modelWasTold: "An error occurred. Error: declined sk-secret",
  apiKey: "sk-secret",
};

describe("SessionRecorder.redactedPayload", () => {
  it("applies a path list relative to the payload, and writes nothing", async () => {
    const { store, recorder } = recorderWith(["**.apiKey", "error.message"]);
    await recorder.startRun();
    expect(recorder.redactedPayload("tool.failed", FAILED)).toEqual({
      error: { name: "Error", message: "[redacted]" },
      modelWasTold: FAILED.modelWasTold,
      apiKey: "[redacted]",
    });
    expect((await readWholeSession(store, "s")).map((event) => event.type)).toEqual([
      "run.started",
    ]);
    expect(recorder.length).toBe(1);
  });

  it("hands a function the payload and the event type; a child run's recorder applies it too", async () => {
    const seen: string[] = [];
    const { recorder } = recorderWith((payload, { type }) => {
      seen.push(type);
      return JSON.parse(JSON.stringify(payload).replaceAll("sk-secret", "[key]"));
    });
    const child = recorder.child({ actor: { type: "agent", id: "b" } });
    expect(child.redactedPayload("tool.failed", FAILED)).toEqual({
      error: { name: "Error", message: "declined [key]" },
      modelWasTold: "An error occurred. Error: declined [key]",
      apiKey: "[key]",
    });
    expect(seen).toEqual(["tool.failed"]);
  });

  it("without redact, gives the payload as plain JSON", async () => {
    const { recorder } = recorderWith();
    const copy = recorder.redactedPayload("tool.failed", FAILED);
    expect(copy).toEqual(FAILED);
    expect(copy).not.toBe(FAILED);
    expect(recorder.redactedPayload("x.app.note", undefined)).toBeNull();
  });

  it("refuses what it would refuse to record, at its path", async () => {
    const { recorder } = recorderWith(() => {
      throw new Error("boom");
    });
    expect(() => recorder.redactedPayload("x.app.note", { when: new Date(0) })).toThrow(
      expect.objectContaining({ code: "non-serializable", path: "$.payload.when" }),
    );
    expect(() => recorder.redactedPayload("x.app.note", { ok: true })).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.redact" }),
    );
    expect(() => recorder.redactedPayload("", { ok: true })).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.type" }),
    );
  });
});
