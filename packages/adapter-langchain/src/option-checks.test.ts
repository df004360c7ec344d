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
      // A missing store is named where it is missing, as the saver's is.
      [{}, "$.store"],
      [{ sessionId: "s1", runId: "run-1" }, "$.store"],
      [{ store: {}, sessionId: "s1" }, "$.store"],
      [{ store: "sqlite:./ledger.db", sessionId: "s1" }, "$.store"],
      [{ store, sessionId: "s1", recordChains: "no" }, "$.recordChains"],
      // The store form's redact, refused as the core recorder refuses it (one string would be
      // walked character by character and remove nothing).
      [{ store, sessionId: "s1", redact: "request.apiKey" }, "$.redact"],
      [{ store, sessionId: "s1", redact: { paths: ["request.apiKey"] } }, "$.redact"],
      [{ store, sessionId: "s1", redact: ["**.apiKey", "request..token"] }, "$.redact[1]"],
      [{ recorder: {} }, "$.recorder"],
      [{ recorder: undefined }, "$.recorder"],
      // A recorder-like object without the methods the handler calls (no startRun).
      [{ recorder: { beforeModelCall() {} } }, "$.recorder"],
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
        { handler: new LedgerCallbackHandler({ store, sessionId: "s1" }), onUnresolved: "ask" },
        "$.onUnresolved",
      ],
      [
        { handler: new LedgerCallbackHandler({ store, sessionId: "s1" }), onUnresolved: true },
        "$.onUnresolved",
      ],
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
    for (const onUnresolved of ["interrupt", "throw", undefined] as const)
      expect(ledgerMiddleware({ handler, onUnresolved }).name).toBe("AgentLedgerMiddleware");
  });

  // A misspelt key was dropped without a word: `runID` started a new random run, `onUnresolve`
  // left the default "throw", `sesionId` recorded into the default session.
  it("a key none of them takes is refused at its path, not ignored", () => {
    const handler = new LedgerCallbackHandler({ store, sessionId: "s1" });
    const recorder = new SessionRecorder({
      store,
      sessionId: "s1",
      actor: { type: "agent", id: "a" },
    });
    const cases: [() => unknown, string][] = [
      [() => new LedgerCallbackHandler(misuse({ store, sessionId: "s1", runID: "r" })), "$.runID"],
      // Misspelt before the sessionId it was meant as is found missing.
      [() => new LedgerCallbackHandler(misuse({ store, sesionId: "s1" })), "$.sesionId"],
      [() => new LedgerCallbackHandler(misuse({ recoder: recorder })), "$.recoder"],
      // The recorder form has its own run and session: a runId beside it would be ignored.
      [() => new LedgerCallbackHandler(misuse({ recorder, runId: "r" })), "$.runId"],
      [() => ledgerMiddleware(misuse({ handler, onUnresolve: "interrupt" })), "$.onUnresolve"],
      [() => new LedgerCheckpointSaver(misuse({ store, sesionId: "x" })), "$.sesionId"],
    ];
    for (const [build, path] of cases)
      expect(thrownBy(build), path).toEqual({ code: "invalid-argument", path });
    // Every option of each form is taken (a key set to undefined sets nothing and is let through).
    const all = {
      store,
      sessionId: "s1",
      runId: "r",
      actor: { type: "agent", id: "a" },
      redact: ["request.apiKey"],
      metadata: { deployment: "eu-1" },
      recordChains: false,
    } as const;
    expect(new LedgerCallbackHandler(all).name).toBe("agent-ledger");
    expect(new LedgerCallbackHandler({ recorder, recordChains: true }).name).toBe("agent-ledger");
    expect(ledgerMiddleware({ handler, onUnresolved: "interrupt" }).name).toBe(
      "AgentLedgerMiddleware",
    );
    const saver = new LedgerCheckpointSaver({
      store,
      sessionId: "threads",
      serde: new LedgerCheckpointSaver({ store }).serde,
      cachedThreads: 5,
    });
    expect(saver.sessionId).toBe("threads");
    expect(
      new LedgerCallbackHandler(misuse({ store, sessionId: "s1", runID: undefined })).name,
    ).toBe("agent-ledger");
  });

  // DESIGN §6: an id that is not 1-255 characters without control characters is `invalid-event`,
  // as the core recorder, the stores and the other adapters say.
  it("a bad sessionId or runId is invalid-event, as everywhere else", () => {
    const bad: unknown[] = ["", 7, "a".repeat(256), "s\u0000", "s\n1", "\uD800"];
    for (const id of bad) {
      const shown = JSON.stringify(id) ?? String(id);
      expect(
        thrownBy(() => new LedgerCallbackHandler(misuse<HandlerOptions>({ store, sessionId: id }))),
        shown,
      ).toEqual({ code: "invalid-event", path: "$.sessionId" });
      expect(
        thrownBy(
          () =>
            new LedgerCallbackHandler(
              misuse<HandlerOptions>({ store, sessionId: "s1", runId: id }),
            ),
        ),
        shown,
      ).toEqual({ code: "invalid-event", path: "$.runId" });
      expect(
        thrownBy(() => new LedgerCheckpointSaver(misuse<SaverOptions>({ store, sessionId: id }))),
        shown,
      ).toEqual({ code: "invalid-event", path: "$.sessionId" });
    }
    // An actor the core recorder would refuse at the first invoke is refused here, as it would,
    // with core's code and path (README): a missing id at `$.actor.id`, not `$.actor`. The
    // actor is an option (invalid-argument); its id is an id (invalid-event, DESIGN §6).
    for (const [actor, code, path] of [
      ["me", "invalid-argument", "$.actor"],
      [{ type: "agent" }, "invalid-event", "$.actor.id"],
      [{ id: "a1" }, "invalid-argument", "$.actor.type"],
      [{ type: "robot", id: "a1" }, "invalid-argument", "$.actor.type"],
      [{ type: "agent", id: "" }, "invalid-event", "$.actor.id"],
      [{ type: "agent", id: "a1", name: "x" }, "invalid-argument", "$.actor.name"],
    ] as const)
      expect(
        thrownBy(
          () =>
            new LedgerCallbackHandler(misuse<HandlerOptions>({ store, sessionId: "s1", actor })),
        ),
        JSON.stringify(actor),
      ).toEqual({ code, path });
    // Metadata the core recorder would refuse at the first invoke, refused here as it would.
    for (const metadata of [[], "eu-1", null])
      expect(
        thrownBy(
          () =>
            new LedgerCallbackHandler(misuse<HandlerOptions>({ store, sessionId: "s1", metadata })),
        ),
        JSON.stringify(metadata),
      ).toEqual({ code: "invalid-argument", path: "$.metadata" });
    // A missing sessionId is a missing id: the same code as the core recorder gives.
    expect(thrownBy(() => new LedgerCallbackHandler(misuse<HandlerOptions>({ store })))).toEqual({
      code: "invalid-event",
      path: "$.sessionId",
    });
    expect(new LedgerCallbackHandler({ store, sessionId: "a".repeat(255) }).name).toBe(
      "agent-ledger",
    );
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

  it("the store form's redact and metadata reach the recorder it opens, as given when it was made", async () => {
    const redact = ["metadata.user"];
    const metadata = { deployment: "eu-1" };
    const handler = new LedgerCallbackHandler({ store, sessionId: "s2", redact, metadata });
    // Changed after: the handler kept what it was given (a recorder would have too).
    redact.length = 0;
    metadata.deployment = "us-1";
    const recorder = await handler.getRecorder();
    expect(recorder.metadataAsStored("model.requested", { user: "jane" })).toEqual({
      deployment: "eu-1",
      user: "[redacted]",
    });
  });
});
