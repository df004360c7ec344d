import { describe, expect, it } from "vitest";
import { hashJson } from "../events/canonical.js";
import { LedgerError, type LedgerErrorCode } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import type { Redaction } from "./redact.js";
import { SessionRecorder } from "./session-recorder.js";

// What a redact function returns is recorded and hashed: it is checked like the caller's own
// payload, and a bad value is named where it sits in what the function returned.

const actor: Actor = { type: "agent", id: "a" };
const address = { sessionId: "s", runId: "r" };

/** `redact` that adds `extra` to every model request. */
function addingToRequests(extra: Record<string, unknown>): Redaction {
  return (payload) => {
    const request = (payload as JsonObject).request as JsonObject | undefined;
    return (request ? { request: { ...request, ...extra } } : payload) as JsonValue;
  };
}

async function refusal(promise: Promise<unknown>): Promise<LedgerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(LedgerError.isInstance(error), String(error)).toBe(true);
  return error as LedgerError;
}

async function recorderWith(redact: Redaction) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, ...address, actor, redact });
  await recorder.startRun();
  const types = async () => (await readWholeRun(store, address)).map((event) => event.type);
  return { store, recorder, types };
}

describe("what a redact function returns", () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["NaN", { t: Number.NaN }, "$.request.t", "NaN"],
    ["a Date", { at: new Date(0) }, "$.request.at", "a Date"],
    ["a bigint", { n: 1n }, "$.request.n", "a bigint"],
    [
      "undefined in an object",
      { nested: { gone: undefined } },
      "$.request.nested.gone",
      "undefined",
    ],
  ];
  it.each(cases)(
    "%s is non-serializable at its path, said to come from redact, and nothing is written",
    async (_, extra, path, what) => {
      const { recorder, types } = await recorderWith(addingToRequests(extra));
      const error = await refusal(recorder.beforeModelCall({ request: { model: "m" } }));
      expect(error.code).toBe("non-serializable");
      expect(error.path).toBe(path);
      expect(error.message).toContain(what);
      expect(error.message).toContain("redact");
      expect(await types()).toEqual(["run.started"]);
    },
  );

  it("a function that returns nothing, or no object where one is needed, is invalid-argument", async () => {
    const store = new MemoryEventStore();
    const make = (redact: Redaction, runId: string) =>
      new SessionRecorder({ store, sessionId: "s", runId, actor, redact });
    const refusals: [Promise<unknown>, LedgerErrorCode][] = [
      [
        make(() => undefined as never, "r1").beforeModelCall({ request: { model: "m" } }),
        "invalid-argument",
      ],
      [make(() => undefined as never, "r2").startRun({ task: "t" }), "invalid-argument"],
      [
        make(() => "scrubbed", "r3").beforeToolCall({ name: "t", args: { a: 1 } }),
        "invalid-argument",
      ],
      [make(() => [1], "r4").completeRun({ done: true }), "invalid-argument"],
    ];
    for (const [promise, code] of refusals) expect((await refusal(promise)).code).toBe(code);
    const failing = make(
      (payload, { type }) => (type === "tool.failed" ? (undefined as never) : payload),
      "r5",
    );
    const tool = await failing.beforeToolCall({ name: "t", args: {} });
    expect((await refusal(failing.toolFailed(tool, new Error("x")))).code).toBe("invalid-argument");
    // Nothing was written but r5's request; its attempt is still open for a good outcome.
    expect(await store.listRuns("s").then((runs) => runs.map((run) => run.runId))).toEqual(["r5"]);
    expect(
      (await readWholeRun(store, { sessionId: "s", runId: "r5" })).map((event) => event.type),
    ).toEqual(["tool.requested"]);
  });

  it("a failure payload it fills with a bad value is refused at that value's path", async () => {
    const { recorder, types } = await recorderWith((payload, { type }) =>
      type === "tool.failed"
        ? ({ ...(payload as JsonObject), retryAfter: Number.POSITIVE_INFINITY } as JsonValue)
        : payload,
    );
    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    const error = await refusal(recorder.toolFailed(tool, new Error("x")));
    expect([error.code, error.path]).toEqual(["non-serializable", "$.retryAfter"]);
    expect(error.message).toContain("redact");
    expect(await types()).toEqual(["run.started", "tool.requested"]);
  });

  it("a redact function that throws is invalid-argument with its error as the cause, and no call is recorded", async () => {
    const bug = new TypeError("cannot read properties of undefined");
    const { recorder, types } = await recorderWith((payload, { type }) => {
      if (type === "model.requested") throw bug;
      return payload;
    });
    const error = await refusal(recorder.beforeModelCall({ request: { model: "m" } }));
    expect([error.code, error.path]).toEqual(["invalid-argument", "$.redact"]);
    expect(error.message).toContain("cannot read properties of undefined");
    expect(error.cause).toBe(bug);
    expect(await types()).toEqual(["run.started"]);
  });

  it("the recorded request, attempt.request and requestHash agree", async () => {
    const { store, recorder } = await recorderWith(
      addingToRequests({ at: "1970-01-01T00:00:00.000Z" }),
    );
    const attempt = await recorder.beforeModelCall({ request: { model: "m" } });
    const [, requested] = await readWholeRun(store, address);
    const payload = requested?.payload as JsonObject;
    expect(payload.request).toEqual({ model: "m", at: "1970-01-01T00:00:00.000Z" });
    expect(attempt.request).toEqual(payload.request);
    expect(payload.requestHash).toBe(hashJson(payload.request));
    expect(attempt.requestHash).toBe(payload.requestHash);
  });
});
