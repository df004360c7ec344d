import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { tool } from "ai";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import { address, eventsOf, makeTools, run, script } from "./testing/replay-agent.test.data.js";
import { assistant as actor, scriptedModel } from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-options-", afterAll);

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
    ["wrapTools(undefined, ...)", () => wrapTools(undefined as never, { recorder }), "tools"],
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
  ];
  for (const [name, make, path] of cases) {
    it(`${name}: invalid-argument at ${path}`, () => {
      const error = thrownBy(make);
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
    });
  }

  it("good options are taken", () => {
    expect(ledgerMiddleware({ recorder }).specificationVersion).toBe("v3");
    const wrapped = wrapTools(tools, {
      recorder,
      idempotent: (name) => name === "a",
      effects: { a: "read", notInThisSet: "write" },
      streaming: [],
      onUnresolved: () => ({ action: "retry" }),
    });
    expect(Object.keys(wrapped)).toEqual(["a"]);
    expect(
      ledgerEmbeddingMiddleware({ recorder, recordEmbeddings: false }).specificationVersion,
    ).toBe("v3");
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
