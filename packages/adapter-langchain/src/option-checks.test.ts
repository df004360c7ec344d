import { LedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerMiddleware } from "./ledger-middleware.js";

/** What a constructor threw: the error's code and path. */
function thrownBy(build: () => unknown): { code?: string; path?: string } {
  try {
    build();
  } catch (error) {
    if (!LedgerError.isInstance(error)) throw error;
    return { code: error.code, path: error.path };
  }
  throw new Error("expected the constructor to throw");
}

// Built by code that never type-checked them (JavaScript, `as never`, options from a config file).
const misuse = <T>(options: unknown) => options as T;
type HandlerOptions = ConstructorParameters<typeof LedgerCallbackHandler>[0];
type SaverOptions = ConstructorParameters<typeof LedgerCheckpointSaver>[0];
type MiddlewareOptions = Parameters<typeof ledgerMiddleware>[0];

describe("bad options are refused at construction, with the path of the bad value", () => {
  const store = new MemoryEventStore();

  it("LedgerCallbackHandler", () => {
    const cases: [unknown, string][] = [
      [undefined, "$"],
      [null, "$"],
      ["s1", "$"],
      [{}, "$"],
      [{ store, sessionId: "" }, "$.sessionId"],
      [{ store, sessionId: 7 }, "$.sessionId"],
      [{ store: {}, sessionId: "s1" }, "$.store"],
      [{ store: "sqlite:./ledger.db", sessionId: "s1" }, "$.store"],
      [{ store, sessionId: "s1", runId: "" }, "$.runId"],
      [{ store, sessionId: "s1", actor: "me" }, "$.actor"],
      [{ store, sessionId: "s1", recordChains: "no" }, "$.recordChains"],
      [{ recorder: {} }, "$.recorder"],
      [{ recorder: undefined }, "$.recorder"],
    ];
    for (const [options, path] of cases) {
      expect(
        thrownBy(() => new LedgerCallbackHandler(misuse<HandlerOptions>(options))),
        JSON.stringify(options) ?? String(options),
      ).toEqual({ code: "invalid-argument", path });
    }
  });

  it("LedgerCheckpointSaver", () => {
    const cases: [unknown, string][] = [
      [undefined, "$"],
      [{}, "$.store"],
      [{ store: { append: () => {} } }, "$.store"],
      [{ store, sessionId: "" }, "$.sessionId"],
      [{ store, cachedThreads: "many" }, "$.cachedThreads"],
      [{ store, serde: {} }, "$.serde"],
    ];
    for (const [options, path] of cases) {
      expect(
        thrownBy(() => new LedgerCheckpointSaver(misuse<SaverOptions>(options))),
        JSON.stringify(options) ?? String(options),
      ).toEqual({ code: "invalid-argument", path });
    }
  });

  it("ledgerMiddleware", () => {
    const cases: [unknown, string][] = [
      [undefined, "$"],
      [{}, "$.handler"],
      [{ handler: {} }, "$.handler"],
      [
        {
          handler: new SessionRecorder({
            store,
            sessionId: "s1",
            actor: { type: "agent", id: "a" },
          }),
        },
        "$.handler",
      ],
    ];
    for (const [options, path] of cases) {
      expect(
        thrownBy(() => ledgerMiddleware(misuse<MiddlewareOptions>(options))),
        JSON.stringify(options) ?? String(options),
      ).toEqual({ code: "invalid-argument", path });
    }
    const handler = new LedgerCallbackHandler({ store, sessionId: "s1" });
    expect(ledgerMiddleware({ handler }).name).toBe("AgentLedgerMiddleware");
  });

  it("good options still build both", async () => {
    const recorder = new SessionRecorder({
      store,
      sessionId: "s1",
      actor: { type: "agent", id: "a" },
    });
    expect(new LedgerCallbackHandler({ recorder }).name).toBe("agent-ledger");
    const handler = new LedgerCallbackHandler({ store, sessionId: "s1", runId: "run-1" });
    expect((await handler.getRecorder()).runId).toBe("run-1");
    expect(new LedgerCheckpointSaver({ store, sessionId: "threads" }).sessionId).toBe("threads");
  });
});
