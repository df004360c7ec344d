import { join } from "node:path";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { ms } from "./span-times.test.data.js";

const scratch = scratchDirectory("otel-exceptions-", { beforeAll, afterAll });

describe("toOtelSpans exception events", () => {
  it("gives each failed call and failed run an exception event at its failure, with the error's class and message", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "failures.db") });
    await store.init();
    onTestFinished(() => store.close());
    const recorder = new SessionRecorder({
      store,
      sessionId: "failures",
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    const overloaded = Object.assign(new Error("upstream overloaded"), { code: "E503" });
    overloaded.name = "APICallError";
    await recorder.modelFailed(model, overloaded);
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "read", args: {} });
    await recorder.toolFailed(tool, new TypeError("bad path"));
    const abandoned = await recorder.beforeToolCall({ toolCallId: "c2", name: "send", args: {} });
    await recorder.abandon(abandoned, "not sent");
    await recorder.failRun(new Error("gave up"));

    const spans = await exportedSpans(store, "failures");
    const named = (name: string) => spans.find((span) => span.name === name) as ReadableSpan;
    const events = await readWholeSession(store, "failures");
    const at = (type: string) =>
      Date.parse(events.find((event) => event.type === type)?.recordedAt ?? "");

    const chat = named("chat m");
    expect(chat.attributes["error.type"]).toBe("E503");
    expect(chat.events).toHaveLength(1);
    const [failure] = chat.events;
    expect(failure?.name).toBe("exception");
    // The class, where error.type is the code.
    expect(failure?.attributes).toMatchObject({
      "exception.type": "APICallError",
      "exception.message": "upstream overloaded",
    });
    // No stack: it holds the machine's local file paths.
    expect(failure?.attributes?.["exception.stacktrace"]).toBeUndefined();
    expect(ms(failure?.time as [number, number])).toBe(at("model.failed"));

    const read = named("execute_tool read");
    expect(read.events.map((event) => [event.name, event.attributes?.["exception.type"]])).toEqual([
      ["exception", "TypeError"],
    ]);
    expect(read.events[0]?.attributes?.["exception.message"]).toBe("bad path");

    const run = named("invoke_agent a");
    expect(run.events.map((event) => event.attributes?.["exception.message"])).toEqual(["gave up"]);
    expect(ms(run.events[0]?.time as [number, number])).toBe(at("run.failed"));

    // An abandoned call threw nothing: an error status, no exception.
    const send = named("execute_tool send");
    expect(send.status.code).toBe(2);
    expect(send.events).toEqual([]);
  });
});

describe("toOtelSpans error.type", () => {
  it("is the recorded error's code when it has a string one, else its HTTP status, else its name", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "codes",
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelFailed(
      model,
      Object.assign(new Error("upstream overloaded"), { code: "E503" }),
    );
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "read", args: {} });
    const timeout = Object.assign(new Error("timed out"), { code: 408 });
    timeout.name = "TimeoutError";
    await recorder.toolFailed(tool, timeout);
    const limited = await recorder.beforeModelCall({ request: { model: "n", messages: [] } });
    const rateLimit = Object.assign(new Error("Too Many Requests"), { statusCode: 429 });
    rateLimit.name = "AI_APICallError";
    await recorder.modelFailed(limited, rateLimit);
    await recorder.failRun(Object.assign(new Error("gave up"), { code: "ERR_GAVE_UP" }));
    const spans = await exportedSpans(store, "codes");
    const errorType = (name: string) =>
      spans.find((span) => span.name === name)?.attributes["error.type"];
    expect(errorType("chat m")).toBe("E503");
    // A code that is not a string (a status number) is not one: the name says more.
    expect(errorType("execute_tool read")).toBe("TimeoutError");
    // An HTTP status is, as the conventions ask of an HTTP failure: a rate limit reads 429.
    expect(errorType("chat n")).toBe("429");
    expect(errorType("invoke_agent a")).toBe("ERR_GAVE_UP");
  });
});
