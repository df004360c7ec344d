import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import { messageHistory } from "../projections/message-history.js";
import { toAtif } from "../projections/to-atif.js";
import { toOtelSpans } from "../projections/to-otel-spans.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "./memory-store.js";
import { readWholeRun, readWholeSession } from "./read-all.js";

async function refusal(action: () => unknown): Promise<{ code?: string; path?: string }> {
  try {
    await action();
  } catch (error) {
    if (!LedgerError.isInstance(error)) return { code: `not a LedgerError: ${String(error)}` };
    return { code: error.code, path: error.path };
  }
  return { code: "no error" };
}

describe("public functions given something that is not a store", () => {
  const address = { sessionId: "s", runId: "r" };
  const calls: Array<[string, (store: never) => unknown]> = [
    ["inspectSession", (store) => inspectSession(store, "s")],
    ["verifyRun", (store) => verifyRun(store, address)],
    ["toAtif", (store) => toAtif(store, "s")],
    ["messageHistory", (store) => messageHistory(store, address)],
    ["readWholeRun", (store) => readWholeRun(store, address)],
    ["readWholeSession", (store) => readWholeSession(store, "s")],
    [
      "SessionRecorder",
      (store) => new SessionRecorder({ store, sessionId: "s", actor: { type: "agent", id: "a" } }),
    ],
  ];
  for (const [name, call] of calls) {
    it(`${name} refuses a missing store or a URL with invalid-argument at $.store`, async () => {
      for (const store of [undefined, null, "sqlite:./ledger.db", {}]) {
        expect(await refusal(() => call(store as never)), `${name}(${String(store)})`).toEqual({
          code: "invalid-argument",
          path: "$.store",
        });
      }
    });
  }

  it("toOtelSpans refuses a missing tracer provider with invalid-argument at $.tracerProvider", async () => {
    const store = new MemoryEventStore();
    await store.append({ ...address, expectedSeq: 0, events: [{ type: "run.started" }] });
    for (const provider of [undefined, null, {}]) {
      expect(await refusal(() => toOtelSpans(store, "s", provider as never))).toEqual({
        code: "invalid-argument",
        path: "$.tracerProvider",
      });
    }
  });
});
