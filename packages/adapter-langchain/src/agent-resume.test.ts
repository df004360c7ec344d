import { join } from "node:path";
import { findLedgerError, inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { z } from "zod";
import {
  agentFor,
  askForClockTwice,
  askToRemember,
  clockTool,
  personDecides,
  RUN,
  rememberTool,
  SESSION,
  script,
  world,
} from "./testing/agent.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents, threadConfig } from "./testing/helpers.js";

const scratch = scratchDirectory("langchain-agent-", { beforeAll, afterAll });

/**
 * The ledger a process leaves when it dies inside send (a child, killed there: the message is
 * out, lookup is recorded), with what it did; `idempotent` declares send idempotent.
 */
async function crashedInsideSend(
  name: string,
  onTestFinished: TestContext["onTestFinished"],
  declared?: "idempotent",
) {
  const path = join(scratch, `${name}.db`);
  const crashed = await crashInChild("agent:send-in-flight", path, ...(declared ? [declared] : []));
  return { store: await openLedger(path, onTestFinished), crashed };
}

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("createAgent with the handler, the middleware and the saver", () => {
  it("on resume, a tool that returned a Command is answered from the ledger with that Command", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "command.db");
    // The process dies once remember has returned: its result reaches the ledger, but neither
    // LangGraph's write of the tool task nor the next checkpoint does.
    const crashed = await crashInChild("agent:command", path);
    const store = await openLedger(path, onTestFinished);
    let runs = crashed.count("remember");
    const second = agentFor(store, [rememberTool(() => runs++)], askToRemember);
    const result = await second.agent.invoke(null, threadConfig(second.handler));
    expect(runs).toBe(1);
    expect(result.messages.at(-1)?.content).toBe("final: saved x");
    const toolMessage = result.messages.find((message) => ToolMessage.isInstance(message));
    expect((toolMessage as ToolMessage | undefined)?.tool_call_id).toBe("call-remember");
  });

  it("on resume, a tool call is not answered with the result of the same call of an earlier turn", async ({
    onTestFinished,
  }) => {
    // Models that give every tool call an empty id, or the same id on every turn.
    for (const id of ["", "call_0"]) {
      const path = join(scratch, `second-turn-${id || "empty"}.db`);
      // The process dies inside the second turn's call (the first turn's is checkpointed).
      const crashed = await crashInChild("agent:second-turn", path, id);
      const store = await openLedger(path, onTestFinished);
      // The clock the new process reads has ticked in the crashed one.
      const ticks = { count: crashed.count("tick") };
      const second = agentFor(store, [clockTool(ticks)], askForClockTwice(id));
      const result = await second.agent.invoke(null, threadConfig(second.handler));
      // The second turn's call was in flight: it runs again (idempotent), it is not "tick 1".
      expect(result.messages.at(-1)?.content).toBe("final: tick 1 | tick 3");
      expect(ticks.count).toBe(3);
    }
  });

  it("on resume, stops an unresolved non-idempotent tool call until a person abandons it", async ({
    onTestFinished,
  }) => {
    // The process dies inside send, once the message is out.
    const { store, crashed } = await crashedInsideSend("abandon", onTestFinished);
    expect(crashed.count("send")).toBe(1);
    expect(
      (await inspectSession(store, SESSION)).unresolved.map((attempt) => attempt.name),
    ).toEqual(["send"]);

    // A new process: same run, same thread, resumed from the checkpoint.
    const second = world();
    const resumed = agentFor(store, second.tools);
    const error = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")).toBeDefined();
    expect(second.effects.send).toBe(0);
    expect(resumed.model.calls).toBe(0);

    // A person checks: the message went out. They abandon the attempt and resume.
    await personDecides(store, "abandon", "checked the outbox: the message was sent");
    const third = world();
    const final = agentFor(store, third.tools);
    const result = await final.agent.invoke(null, threadConfig(final.handler));
    expect(third.effects.send).toBe(0);
    expect(String(result.messages.at(-1)?.content)).toContain("checked the outbox");
    // The first model call is in the checkpoint: resuming pays only for the last one.
    expect(crashed.count("model") + resumed.model.calls + final.model.calls).toBe(2);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("on resume, runs an unresolved non-idempotent tool call again once a person approves it", async ({
    onTestFinished,
  }) => {
    // The process dies inside send; whether the message went out, only a person can find out.
    const { store } = await crashedInsideSend("approve", onTestFinished);
    const stopped = agentFor(store, world().tools);
    const error = await stopped.agent
      .invoke(null, threadConfig(stopped.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")).toBeDefined();

    // A person checks the outbox from another process: nothing went out; run it again.
    await personDecides(store, "approve", "checked the outbox: not sent");
    const third = world();
    const final = agentFor(store, third.tools);
    await final.agent.invoke(null, threadConfig(final.handler));
    expect(third.effects.send).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("on resume, runs an unresolved idempotent tool call again", async ({ onTestFinished }) => {
    const { store, crashed } = await crashedInsideSend("idempotent", onTestFinished, "idempotent");
    const second = world({ sendIdempotent: true });
    const resumed = agentFor(store, second.tools);
    const result = await resumed.agent.invoke(null, threadConfig(resumed.handler));
    expect(result.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(second.effects.send).toBe(1);
    expect(crashed.count("model") + resumed.model.calls).toBe(2);
    const retried = (await runEvents(store, SESSION, RUN)).filter(
      (event) => event.type === "tool.requested" && event.retryOf !== undefined,
    );
    expect(retried).toHaveLength(1);
  });

  it("a tool that pauses at interrupt() runs again when a new process resumes the graph with the person's answer", async () => {
    const store = new MemoryEventStore();
    const sent: string[] = [];
    const send = tool(
      async ({ to }: { to: string }) => {
        const answer = interrupt({ question: `send to ${to}?` });
        if (answer !== "yes") return "not sent";
        sent.push(to);
        return `sent to ${to}`;
      },
      { name: "send", description: "write", schema: z.object({ to: z.string() }) },
    );
    const ask = (messages: BaseMessage[]) =>
      messages.some((message) => ToolMessage.isInstance(message))
        ? script(messages)
        : new AIMessage({
            content: "",
            tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
          });
    const first = agentFor(store, [send], ask);
    const paused = await first.agent.invoke(
      { messages: [{ role: "user", content: "go" }] },
      threadConfig(first.handler),
    );
    expect(paused.__interrupt__).toHaveLength(1);
    expect(sent).toEqual([]);

    // The person answers later, through another process (a new handler on the same run).
    const second = agentFor(store, [send], ask);
    const result = await second.agent.invoke(
      new Command({ resume: "yes" }),
      threadConfig(second.handler),
    );
    expect(sent).toEqual(["bob"]);
    expect(result.messages.at(-1)?.content).toBe("final: sent to bob");
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested).toHaveLength(2);
    expect(new Set(requested.map((event) => event.stepId)).size).toBe(1);
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });
});
