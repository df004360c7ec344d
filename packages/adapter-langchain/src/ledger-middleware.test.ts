import { join } from "node:path";
import { findLedgerError, MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild, openLedger, runInChild } from "./testing/crashing-agent.test.data.js";
import { runEvents } from "./testing/helpers.js";
import {
  agentFor,
  answerIn,
  failingSend,
  GO,
  handToModel,
  invalidArgumentsAgent,
  RUN,
  refusingAgent,
  SESSION,
} from "./testing/ledger-middleware.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-middleware-", { beforeAll, afterAll });

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("ledgerMiddleware: a recorded tool failure is answered on resume as it ended live", () => {
  it("a tool's own error stopped the agent live: the resumed run stops there again, without running the tool", async () => {
    const store = new MemoryEventStore();
    const live = failingSend();
    const first = agentFor(store, [live.send], (handler) => [ledgerMiddleware({ handler })]);
    const stopped = await first.invoke(GO);
    expect("error" in stopped && stopped.error.message).toBe("smtp is down");

    // A new process resumes the thread: the failed call is answered from the ledger.
    const resumedTool = failingSend();
    const second = agentFor(store, [resumedTool.send], (handler) => [
      ledgerMiddleware({ handler }),
    ]);
    const resumed = await second.invoke(null);
    expect(resumedTool.calls.count).toBe(0);
    expect("error" in resumed && resumed.error.message).toBe("smtp is down");
    expect(findLedgerError("error" in resumed ? resumed.error : undefined)).toBeUndefined();
    // The model is not asked to go on from an error the original run never gave it.
    expect(second.model.calls).toBe(0);
    const events = await runEvents(store, SESSION, RUN);
    expect(events.filter((event) => event.type === "tool.requested")).toHaveLength(1);
  });

  it("with toolErrorMiddleware before it, the model gets the same ToolMessage live and on resume", async ({
    onTestFinished,
  }) => {
    const reference = await agentFor(
      new MemoryEventStore(),
      [failingSend().send],
      handToModel,
    ).invoke(GO);
    expect(reference).toEqual({ answer: "final: failed: smtp is down" });

    const path = join(scratch, "tool-error.db");
    await crashInChild("ledger-middleware:tool-error", path);
    const store = await openLedger(path, onTestFinished);
    const resumedTool = failingSend();
    const resumed = await agentFor(store, [resumedTool.send], handToModel).invoke(null);
    expect(resumedTool.calls.count).toBe(0);
    expect(resumed).toEqual(reference);
  });

  it("a tool called with arguments its schema rejects: live and resumed, the model is told and the agent goes on", async ({
    onTestFinished,
  }) => {
    // The error's text holds a stack trace: the reference run is a child too, running the same
    // compiled code through the same middleware.
    const reference = answerIn(
      await runInChild(
        "ledger-middleware:invalid-arguments-reference",
        join(scratch, "invalid-arguments-reference.db"),
      ),
    );
    expect("answer" in reference && reference.answer).toContain("Invalid email address");

    const path = join(scratch, "invalid-arguments.db");
    const first = await crashInChild("ledger-middleware:invalid-arguments", path);
    const store = await openLedger(path, onTestFinished);
    const resumed = invalidArgumentsAgent(store);
    expect(await resumed.invoke(null)).toEqual(reference);
    expect(first.count("model") + resumed.model.calls).toBe(2);
  });

  it("a tool that returned an error ToolMessage: the resumed run gets that same message", async ({
    onTestFinished,
  }) => {
    const reference = await refusingAgent(new MemoryEventStore()).invoke(GO);
    expect(reference).toEqual({ answer: "final: refused: bob is not in the address book" });

    const path = join(scratch, "error-message.db");
    await crashInChild("ledger-middleware:error-message", path);
    const store = await openLedger(path, onTestFinished);
    expect(await refusingAgent(store).invoke(null)).toEqual(reference);
  });
});

describe("ledgerMiddleware without its handler in the callbacks", () => {
  const hello = { messages: [{ role: "user", content: "hi" }] };
  const thread = { configurable: { thread_id: "t1" } };

  it("stops before the model is called, saying so, and records nothing", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedChatModel(() => new AIMessage("done"));
    const handler = new LedgerCallbackHandler({ store, sessionId: "s", runId: "r" });
    const agent = createAgent({ model, tools: [], middleware: [ledgerMiddleware({ handler })] });
    const error = await agent.invoke(hello, thread).catch((caught: unknown) => caught);
    const refusal = findLedgerError(error);
    expect(refusal?.code, String(error)).toBe("invalid-argument");
    expect(refusal?.path).toBe("$.callbacks");
    expect(String(error)).toMatch(/callbacks: \[handler\]/);
    expect(model.calls).toBe(0);
    expect((await store.readSession({ sessionId: "s" })).events).toEqual([]);
  });

  it("goes on when the handler is given to the invocation, or to the model itself", async () => {
    for (const onModel of [false, true]) {
      const store = new MemoryEventStore();
      const handler = new LedgerCallbackHandler({ store, sessionId: "s", runId: "r" });
      const model = new ScriptedChatModel(
        () => new AIMessage("done"),
        onModel ? { callbacks: [handler] } : {},
      );
      const agent = createAgent({ model, tools: [], middleware: [ledgerMiddleware({ handler })] });
      const result = await agent.invoke(hello, {
        ...thread,
        ...(onModel ? {} : { callbacks: [handler] }),
      });
      expect(result.messages.at(-1)?.content).toBe("done");
      const events = await runEvents(store, "s", "r");
      expect(events.map((event) => event.type)).toContain("model.completed");
    }
  });
});
