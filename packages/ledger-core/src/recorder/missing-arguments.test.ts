import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { messageHistory } from "../projections/message-history.js";
import { startedRun } from "./started-run.test.data.js";

/** What a JavaScript caller (no types to stop it) gets for a missing argument: a coded error. */
describe("a missing argument from JavaScript", () => {
  it("rejects each call with invalid-argument at $, never a TypeError, and writes nothing", async () => {
    const { store, recorder } = await startedRun();
    const loose = recorder as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const calls: [string, () => Promise<unknown>][] = [
      ["beforeModelCall()", () => loose.beforeModelCall?.call(recorder) as Promise<unknown>],
      [
        "beforeToolCall(null)",
        () => loose.beforeToolCall?.call(recorder, null) as Promise<unknown>,
      ],
      ["modelCompleted(undefined, {})", () => recorder.modelCompleted(undefined as never, {})],
      [
        "modelFailed(undefined, error)",
        () => recorder.modelFailed(undefined as never, new Error("x")),
      ],
      ["toolCompleted(null, 1)", () => recorder.toolCompleted(null as never, 1)],
      [
        "toolFailed(undefined, error)",
        () => recorder.toolFailed(undefined as never, new Error("x")),
      ],
      ["retry(undefined)", () => recorder.retry(undefined as never)],
      ["messageHistory(store)", () => messageHistory(store, undefined as never)],
    ];
    for (const [name, call] of calls) {
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = call();
      }, name).not.toThrow();
      const error = await promise?.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), `${name}: ${String(error)}`).toBe(
        true,
      );
      expect(error, name).toMatchObject({ path: "$" });
    }
    expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toHaveLength(1);
  });

  // Recorded as null, every such call hashed the same: on resume each matched the first
  // recorded answer, whatever the loop meant to ask.
  it("refuses a model call without a request at $.request, and writes nothing", async () => {
    const { store, recorder } = await startedRun();
    for (const options of [{}, { request: undefined }]) {
      const refused = recorder.beforeModelCall(options as never);
      await expect(refused).rejects.toMatchObject({ code: "invalid-argument", path: "$.request" });
      await expect(refused).rejects.toThrow("beforeModelCall needs the request it sends the model");
    }
    expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toHaveLength(1);
    // A tool call without args (a tool that takes none) and a tool that returned nothing are
    // recorded with null: adapters pass a JavaScript tool's undefined result as it is.
    const call = await recorder.beforeToolCall({ name: "clock" } as never);
    const completed = await recorder.toolCompleted(call, undefined);
    expect(completed.payload).toEqual({ result: null });
    const { events } = await store.readRun({ sessionId: "s", runId: "r" });
    expect(events.find((event) => event.type === "tool.requested")?.payload).toMatchObject({
      name: "clock",
      args: null,
    });
  });

  it("refuses child() without options as the constructor refuses bad options", async () => {
    const { recorder: parent } = await startedRun();
    let error: unknown;
    try {
      (parent.child as unknown as () => unknown)();
    } catch (thrown) {
      error = thrown;
    }
    expect(LedgerError.isInstance(error, "invalid-argument")).toBe(true);
    expect(error).toMatchObject({ path: "$" });
  });
});
