import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
import { innerCallsSettled } from "./inner-calls-settled.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import { address, eventsOf, makeTools, run, script } from "./testing/replay-agent.test.data.js";
import {
  assistant as actor,
  scriptedModel,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-options-", { beforeAll, afterAll });

const recorder = new SessionRecorder({ store: new MemoryEventStore(), sessionId: "s", actor });
const tools = {
  a: tool({ inputSchema: z.object({ x: z.number() }), execute: async ({ x }) => x }),
};

/** What `make` threw: the test expects an `invalid-argument` LedgerError naming `path`. */
function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("bad options are refused when the middleware or the tool wrapper is made", () => {
  const cases: [string, () => unknown, string][] = [
    ["ledgerMiddleware()", () => ledgerMiddleware(undefined as never), "$"],
    ["ledgerMiddleware(recorder)", () => ledgerMiddleware(recorder as never), "$.recorder"],
    ["ledgerMiddleware({})", () => ledgerMiddleware({} as never), "$.recorder"],
    [
      "ledgerMiddleware({ recorder: {} })",
      () => ledgerMiddleware({ recorder: {} as never }),
      "$.recorder",
    ],
    ["wrapTools(tools, {})", () => wrapTools(tools, {} as never), "$.recorder"],
    ["wrapTools(undefined, ...)", () => wrapTools(undefined as never, { recorder }), "$.tools"],
    ["wrapTools(null, ...)", () => wrapTools(null as never, { recorder }), "$.tools"],
    [
      "wrapTools({ a: null }, ...)",
      () => wrapTools({ a: null } as never, { recorder }),
      "$.tools.a",
    ],
    [
      "wrapTools({ a: { execute: 'run' } }, ...)",
      () => wrapTools({ a: { execute: "run" } } as never, { recorder }),
      "$.tools.a.execute",
    ],
    [
      "ledgerMiddleware({ recorder, bogusKey: 1 })",
      () => ledgerMiddleware({ recorder, bogusKey: 1 } as never),
      "$.bogusKey",
    ],
    [
      "ledgerMiddleware({ recorder, redcat: false })",
      () => ledgerMiddleware({ recorder, redcat: false } as never),
      "$.redcat",
    ],
    [
      "wrapTools(tools, { recorder, idempotnt: ['a'] })",
      () => wrapTools(tools, { recorder, idempotnt: ["a"] } as never),
      "$.idempotnt",
    ],
    [
      "idempotent: ['a', 'b'], no tool b",
      () => wrapTools(tools, { recorder, idempotent: ["a", "b"] }),
      "$.idempotent[1]",
    ],
    [
      "effects: { b: 'read' }, no tool b",
      () => wrapTools(tools, { recorder, effects: { b: "read" } }),
      "$.effects.b",
    ],
    [
      "effects: { toString: 'read' }, no tool toString",
      () => wrapTools(tools, { recorder, effects: { toString: "read" } as never }),
      "$.effects.toString",
    ],
    [
      "streaming: ['b'], no tool b",
      () => wrapTools(tools, { recorder, streaming: ["b"] }),
      "$.streaming[0]",
    ],
    [
      "effects: { a: 'bogus' }",
      () => wrapTools(tools, { recorder, effects: { a: "bogus" as never } }),
      "$.effects.a",
    ],
    [
      "effects: 'read'",
      () => wrapTools(tools, { recorder, effects: "read" as never }),
      "$.effects",
    ],
    [
      "idempotent: 'ab'",
      () => wrapTools(tools, { recorder, idempotent: "ab" as never }),
      "$.idempotent",
    ],
    [
      "idempotent: ['a', 1]",
      () => wrapTools(tools, { recorder, idempotent: ["a", 1] as never }),
      "$.idempotent[1]",
    ],
    [
      "streaming: 'a'",
      () => wrapTools(tools, { recorder, streaming: "a" as never }),
      "$.streaming",
    ],
    [
      "onUnresolved: 'retry'",
      () => wrapTools(tools, { recorder, onUnresolved: "retry" as never }),
      "$.onUnresolved",
    ],
    ["ledgerEmbeddingMiddleware({})", () => ledgerEmbeddingMiddleware({} as never), "$.recorder"],
    [
      "recordEmbeddings: 'yes'",
      () => ledgerEmbeddingMiddleware({ recorder, recordEmbeddings: "yes" as never }),
      "$.recordEmbeddings",
    ],
    [
      "ledgerEmbeddingMiddleware({ recorder, recordEmbedings: true })",
      () => ledgerEmbeddingMiddleware({ recorder, recordEmbedings: true } as never),
      "$.recordEmbedings",
    ],
  ];
  for (const [name, make, path] of cases) {
    it(`${name}: invalid-argument at ${path}`, () => {
      const error = thrownBy(make);
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
    });
  }

  it("innerCallsSettled({ recorder, timeout }): refused at $.timeout, not a wait without bound", async () => {
    // `timeout` for `timeoutMs` left the wait unbounded without a word.
    for (const [options, path] of [
      [{ recorder, timeout: 50 }, "$.timeout"],
      [{ recorder, timeoutMs: -1 }, "$.timeoutMs"],
      [recorder, "$.recorder"],
    ] as const) {
      const error = await innerCallsSettled(options as never).catch((caught: unknown) => caught);
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
    }
    await expect(innerCallsSettled({ recorder, timeoutMs: 50 })).resolves.toBeUndefined();
  });

  it("good options are taken", () => {
    expect(ledgerMiddleware({ recorder }).specificationVersion).toBe("v3");
    // A tool without execute (run by the provider or the client) can be named.
    const b = tool({ inputSchema: z.object({}) });
    const wrapped = wrapTools(
      { ...tools, b },
      {
        recorder,
        idempotent: (name) => name === "a",
        effects: { a: "read", b: "write" },
        streaming: ["b"],
        onUnresolved: () => ({ action: "retry" }),
      },
    );
    expect(Object.keys(wrapped)).toEqual(["a", "b"]);
    expect(
      ledgerEmbeddingMiddleware({ recorder, recordEmbeddings: false }).specificationVersion,
    ).toBe("v3");
  });
});

describe("a misspelt option or tool name is refused before anything is recorded", () => {
  const lookup = tool({ inputSchema: z.object({ key: z.string() }), execute: async () => "v" });
  const send = tool({ inputSchema: z.object({ to: z.string() }), execute: async () => "sent" });

  /** Runs one generateText turn that would call `lookup`, wired as `wire` builds it. */
  async function turn(wire: (recorder: SessionRecorder) => { middleware: never; tools: never }) {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    const scripted = scriptedModel([toolCallsResult(toolCall("c1", "lookup", { key: "k" }))]);
    const error = await (async () => {
      const { middleware, tools: wrapped } = wire(recorder);
      await generateText({
        model: wrapLanguageModel({ model: scripted.model, middleware }),
        prompt: "look k up",
        tools: wrapped,
      });
    })().catch((caught: unknown) => caught);
    return { error: error as LedgerError, store, calls: scripted.calls };
  }

  it("ledgerMiddleware({ redcat }): refused at $.redcat, naming the options it takes", async () => {
    const { error, store, calls } = await turn((recorder) => ({
      middleware: ledgerMiddleware({ recorder, redcat: ["$.prompt"] } as never) as never,
      tools: wrapTools({ lookup }, { recorder }) as never,
    }));
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect(error.path).toBe("$.redcat");
    expect(error.message).toContain("recorder, redact");
    expect(calls).toBe(0);
    expect(await readWholeRun(store, { sessionId: "s", runId: "r" })).toEqual([]);
  });

  it("wrapTools idempotent naming no tool: refused at its index, naming the tools there are", async () => {
    const { error, store, calls } = await turn((recorder) => ({
      middleware: ledgerMiddleware({ recorder }) as never,
      tools: wrapTools({ lookup, send }, { recorder, idempotent: ["lookpu"] }) as never,
    }));
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect(error.path).toBe("$.idempotent[0]");
    expect(error.message).toContain('"lookpu"');
    expect(error.message).toContain("lookup, send");
    expect(calls).toBe(0);
    expect(await readWholeRun(store, { sessionId: "s", runId: "r" })).toEqual([]);
  });

  it("wrapTools effects naming no tool: refused at $.effects.<name>, naming the tools there are", () => {
    const error = thrownBy(() =>
      wrapTools({ lookup, send }, { recorder, effects: { lookup: "read", sned: "write" } }),
    ) as LedgerError;
    expect(error.path).toBe("$.effects.sned");
    expect(error.message).toContain('"sned"');
    expect(error.message).toContain("lookup, send");
  });

  it("wrapTools({ recorder, idempotnt }): refused at $.idempotnt, naming the options it takes", () => {
    const error = thrownBy(() =>
      wrapTools({ lookup }, { recorder, idempotnt: ["lookup"] } as never),
    ) as LedgerError;
    expect(error.path).toBe("$.idempotnt");
    expect(error.message).toContain("recorder, idempotent, effects, streaming, onUnresolved");
  });
});

describe("onUnresolved's answer", () => {
  async function crashedInsideSend(): Promise<EventStore> {
    const path = join(scratch, "unresolved-send.db");
    const crashed = await crashInChild("replay inside send c2", path);
    expect(crashed).toEqual({ effects: ["lookup:a"], modelCalls: 1 });
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    return store;
  }

  it("that is neither retry nor abandon stops the run with invalid-argument; the call stays unresolved", async () => {
    const store = await crashedInsideSend();
    const before = await eventsOf(store);
    const resumedModel = scriptedModel(script().slice(1));
    const resumedTools = makeTools();
    const error = await run({
      recorder: await SessionRecorder.resume({ store, actor, ...address }),
      model: resumedModel.model,
      tools: resumedTools.tools,
      wrap: { onUnresolved: () => ({ action: "Retry" }) as never },
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect((error as LedgerError).path).toBe("$.onUnresolved");
    expect(resumedTools.effects).toEqual([]);
    expect(resumedModel.calls).toBe(0);
    expect(await eventsOf(store)).toEqual(before);
    const { unresolved } = await inspectSession(store, address.sessionId);
    expect(unresolved.map((attempt) => attempt.toolCallId)).toEqual(["c2"]);
  });
});
