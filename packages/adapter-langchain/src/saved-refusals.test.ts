import { join } from "node:path";
import { type EventStore, findLedgerError, inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GO, personDecides, RUN, SESSION, script, world } from "./testing/agent.test.data.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { ledgerAgent, threadConfig } from "./testing/helpers.js";

const scratch = scratchDirectory("langchain-saved-refusals-", { beforeAll, afterAll });

/** One process's createAgent on the crashed run with the handler alone (no ledgerMiddleware). */
function handlerAlone(store: EventStore) {
  const tools = world();
  return {
    tools,
    ...ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: tools.tools,
      answer: script,
      middleware: () => [],
    }),
  };
}

type Resumed = ReturnType<typeof handlerAlone>;

/** Resumes `resumed`'s agent on thread-1; resolves with what it threw, or its result. */
function resume(resumed: Resumed) {
  return resumed.agent
    .invoke(null, threadConfig(resumed.handler))
    .catch((caught: unknown) => ({ error: caught }));
}

/** The `unresolved-attempt` a resume stopped with (`resume`'s outcome), if any. */
function refusalIn(outcome: unknown) {
  return findLedgerError((outcome as { error?: unknown }).error, "unresolved-attempt");
}

/**
 * The process dies inside send (under ledgerMiddleware), once the message is out; the user then
 * resumes with the handler alone, which refuses send: createAgent's tool node saves the refusal
 * as send's ToolMessage in the thread's state (the run stops at the model call after it).
 */
async function refusedOnce(name: string, cleanup: (close: () => Promise<void>) => unknown) {
  const path = join(scratch, `${name}.db`);
  await crashInChild("agent:send-in-flight", path);
  const store = await openLedger(path, cleanup);
  const first = handlerAlone(store);
  const outcome = await resume(first);
  expect(refusalIn(outcome)).toBeDefined();
  expect(first.model.calls).toBe(0);
  return { store, first };
}

/** send's ToolMessage in the thread's saved state. */
async function savedSendMessage(resumed: Pick<Resumed, "agent" | "handler">): Promise<ToolMessage> {
  const state = await resumed.agent.graph.getState(threadConfig(resumed.handler));
  const messages = (state.values as { messages: BaseMessage[] }).messages;
  const saved = messages.find(
    (message) => ToolMessage.isInstance(message) && message.tool_call_id === "call-send",
  );
  if (!saved || !ToolMessage.isInstance(saved)) throw new Error("no ToolMessage for send");
  return saved;
}

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("createAgent resumed with the handler alone: the refusal its tool node saved", () => {
  it("a later resume with no decision made stops again before the model reads the saved refusal", async ({
    onTestFinished,
  }) => {
    const { store, first } = await refusedOnce("undecided", onTestFinished);
    expect(String((await savedSendMessage(first)).content)).toMatch(/was in flight/);

    // The same process invokes again: the tools node does not run again (it finished), and the
    // model call after it carries the saved refusal as send's answer.
    const again = await resume(first);
    expect(refusalIn(again)?.details).toMatchObject({
      toolCallId: "call-send",
      name: "send",
    });
    expect(first.model.calls).toBe(0);

    // So does a new process.
    const later = handlerAlone(store);
    const outcome = await resume(later);
    expect(refusalIn(outcome)?.details).toMatchObject({
      toolCallId: "call-send",
      name: "send",
    });
    expect(later.model.calls).toBe(0);
    expect(later.tools.effects.send).toBe(0);
    // Still for a person to decide.
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([
      expect.objectContaining({ toolCallId: "call-send" }),
    ]);
  });

  it("resumed with ledgerMiddleware after that, as the README says to, the saved refusal still stops the resume", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("middleware", onTestFinished);
    const tools = world();
    const later = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: tools.tools,
      answer: script,
    });
    const outcome = await later.agent
      .invoke(null, threadConfig(later.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(outcome, "unresolved-attempt")?.details).toMatchObject({
      toolCallId: "call-send",
    });
    expect(later.model.calls).toBe(0);
    expect(tools.effects.send).toBe(0);
  });

  it("another thread on the handler, whose model gives the same ids, goes on: the prompt's own thread's calls count", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("threads", onTestFinished);
    const later = handlerAlone(store);
    // A new conversation: its send (call-send too) runs, and its model reads its answer.
    const other = await later.agent.invoke(GO, threadConfig(later.handler, "thread-2"));
    expect(other.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(later.tools.effects.send).toBe(1);
    // Thread 1's saved refusal still stops thread 1.
    const outcome = await resume(later);
    expect(refusalIn(outcome)).toBeDefined();
    expect(later.model.calls).toBe(2);
  });

  it("an approved call cannot run again in that thread: the resume stops and says what to do instead", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("approved", onTestFinished);
    await personDecides(store, "approve", "checked the outbox: not sent");

    const later = handlerAlone(store);
    const outcome = await resume(later);
    const refusal = refusalIn(outcome);
    expect(refusal?.details).toMatchObject({
      toolCallId: "call-send",
      name: "send",
      approved: true,
    });
    expect(refusal?.message).toMatch(
      /approved to run again, but it cannot run again in this thread/,
    );
    // The command it prints names the ledger's file: pasted into another shell, it finds the run.
    expect(refusal?.message).toContain(
      `\`agent-ledger resolve --abandon "reason" --store sqlite:${join(scratch, "approved.db")} -- `,
    );
    expect(later.tools.effects.send).toBe(0);
    expect(later.model.calls).toBe(0);
  });

  it("the route the refusal names: abandon it, and replace the saved refusal with LangGraph's updateState; the model reads the person's reason", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("replaced", onTestFinished);
    await personDecides(store, "approve", "checked the outbox: not sent");
    await personDecides(store, "abandon", "not sent; ask for it again");

    const later = handlerAlone(store);
    const saved = await savedSendMessage(later);
    // The same message id: LangGraph's messages reducer replaces the saved one. As the tools
    // node's update, so that the model's node runs next.
    await later.agent.updateState(
      threadConfig(later.handler),
      {
        messages: [
          new ToolMessage({
            id: saved.id as string,
            tool_call_id: "call-send",
            name: "send",
            content: "not sent; ask for it again",
          }),
        ],
      },
      "tools",
    );
    const result = (await resume(later)) as { messages: BaseMessage[] };
    expect(result.messages.at(-1)?.content).toBe("final: value of x | not sent; ask for it again");
    expect(later.tools.effects.send).toBe(0);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("abandoned alone, the model reads the saved refusal, not the person's reason", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("abandoned", onTestFinished);
    await personDecides(store, "abandon", "not sent");

    const later = handlerAlone(store);
    const result = (await resume(later)) as { messages: BaseMessage[] };
    expect(String(result.messages.at(-1)?.content)).toMatch(
      /\| UnresolvedAttemptError: tool call send \(call-send\) was in flight/,
    );
    expect(later.tools.effects.send).toBe(0);
  });
});

// send completed before the crash, LangGraph had not saved its task's write: the ledger holds its
// result, which a callback cannot hand back. The handler alone refuses it (it must not run twice),
// and createAgent's tool node saves that refusal as send's ToolMessage.
describe.concurrent("createAgent resumed with the handler alone after a call completed: the refusal its tool node saved", () => {
  async function refusedAfterCompletion(
    name: string,
    cleanup: (close: () => Promise<void>) => unknown,
  ) {
    const path = join(scratch, `${name}.db`);
    const crashed = await crashInChild("agent:send-completed", path);
    expect(crashed.count("send")).toBe(1);
    const store = await openLedger(path, cleanup);
    const first = handlerAlone(store);
    const outcome = await resume(first);
    expect(refusalIn(outcome)?.message).toMatch(/was already completed before the run was resumed/);
    expect(first.model.calls).toBe(0);
    expect(String((await savedSendMessage(first)).content)).toMatch(/was already completed/);
    return { store, first };
  }

  it("a later resume stops before the model reads the saved refusal as send's result", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedAfterCompletion("completed", onTestFinished);
    const later = handlerAlone(store);
    const outcome = await resume(later);
    const refusal = refusalIn(outcome);
    expect(refusal?.details).toMatchObject({
      toolCallId: "call-send",
      name: "send",
      status: "completed",
    });
    expect(refusal?.message).toMatch(/LangGraph saved that refusal as the call's ToolMessage/);
    expect(later.model.calls).toBe(0);
    expect(later.tools.effects.send).toBe(0);
    // Nothing to decide: the ledger holds send's result.
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("resumed with ledgerMiddleware, it stops too; with the saved refusal replaced by the recorded result, the model reads that result and send ran once", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedAfterCompletion("completed-replaced", onTestFinished);
    const tools = world();
    const later = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: tools.tools,
      answer: script,
    });
    const stopped = await later.agent
      .invoke(null, threadConfig(later.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(stopped, "unresolved-attempt")?.details).toMatchObject({
      toolCallId: "call-send",
      status: "completed",
    });
    expect(later.model.calls).toBe(0);

    const saved = await savedSendMessage(later);
    await later.agent.updateState(
      threadConfig(later.handler),
      {
        messages: [
          new ToolMessage({
            id: saved.id as string,
            tool_call_id: "call-send",
            name: "send",
            content: "sent to bob",
          }),
        ],
      },
      "tools",
    );
    const result = await later.agent.invoke(null, threadConfig(later.handler));
    expect(result.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(tools.effects.send).toBe(0);
  });
});

// What `agent-ledger inspect` tells the person deciding on send, and what the resume then does.
describe.concurrent("agent-ledger inspect and resolve on a call refused with the handler alone", () => {
  it("once its refusal was saved as its ToolMessage: approving it is not offered, and not taken, as making it again", async ({
    onTestFinished,
  }) => {
    const { store } = await refusedOnce("cli-saved", onTestFinished);
    const path = join(scratch, "cli-saved.db");
    const undecided = await agentLedger(path, "inspect", SESSION);
    expect(undecided.stdout).toContain(
      "its refusal on an earlier resume was saved in the agent's state as the call's result",
    );
    expect(undecided.stdout).not.toContain('--approve "reason" instead makes it again');

    const [send] = (await inspectSession(store, SESSION)).unresolved;
    const attemptId = send?.attemptId as string;
    const approving = await agentLedger(
      path,
      "resolve",
      "--approve",
      "not sent",
      "--",
      SESSION,
      attemptId,
    );
    expect(approving.code).not.toBe(0);
    expect(approving.stderr).toContain("cannot be approved for a re-run");
    expect(approving.stderr).toContain(`resolve --abandon "reason" --store`);
    expect((await inspectSession(store, SESSION)).unresolved[0]?.approvedAt).toBeUndefined();

    // Approved another way (core's SessionRecorder.approve): inspect still asks for an abandonment.
    await personDecides(store, "approve", "checked the outbox: not sent");
    const approved = await agentLedger(path, "inspect", SESSION);
    expect(approved.stdout).toContain("but no resume makes the call again");
    expect(approved.stdout).not.toContain("the next resume makes the call again");
    expect(approved.stdout).not.toContain("next: nothing to decide");
    expect(approved.stdout).toContain(`agent-ledger resolve --abandon "reason"`);
    // As the resume does: it refuses, saying to abandon.
    const later = handlerAlone(store);
    expect(refusalIn(await resume(later))?.details).toMatchObject({ approved: true });
    expect(later.tools.effects.send).toBe(0);
  });

  it("approved before a resume ran it: inspect says the next resume makes it again, and the handler alone does", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "cli-approved-first.db");
    await crashInChild("agent:send-in-flight", path);
    const store = await openLedger(path, onTestFinished);
    await personDecides(store, "approve", "checked the outbox: not sent");
    const inspected = await agentLedger(path, "inspect", SESSION);
    expect(inspected.stdout).toContain("the next resume makes the call again");
    expect(inspected.stdout).toContain("next: nothing to decide");

    const later = handlerAlone(store);
    const result = (await resume(later)) as { messages: BaseMessage[] };
    expect(result.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(later.tools.effects.send).toBe(1);
  });
});
