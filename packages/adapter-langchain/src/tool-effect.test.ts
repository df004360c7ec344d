import { inspectSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { FlakyStore, payloadOf, runEvents, threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "effect-session";
const RUN = "effect-run";

// One turn asks for `lookup` (declared idempotent, it calls `audit` itself) and `send` (not).
function script(messages: BaseMessage[]) {
  if (messages.some((message) => ToolMessage.isInstance(message))) return new AIMessage("done");
  return new AIMessage({
    content: "",
    tool_calls: [
      { id: "call-lookup", name: "lookup", args: {} },
      { id: "call-send", name: "send", args: {} },
    ],
  });
}

function world(store: FlakyStore, crashInSend: boolean) {
  const runs = { lookup: 0, send: 0, audit: 0 };
  const audit = tool(
    async () => {
      runs.audit++;
      return "audited";
    },
    { name: "audit", description: "write", schema: z.object({}) },
  );
  const lookup = tool(
    async (_input, config) => {
      runs.lookup++;
      await audit.invoke({}, config);
      return "value";
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({}),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  const send = tool(
    async () => {
      runs.send++;
      // The process "dies" inside send (after lookup and audit are recorded).
      if (crashInSend) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        store.failing = true;
      }
      return "sent";
    },
    { name: "send", description: "write", schema: z.object({}) },
  );
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  // Callback only: no ledgerMiddleware, the effect comes from handleToolStart's metadata.
  const agent = createAgent({
    model: new ScriptedChatModel(script),
    tools: [lookup, send, audit],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  const config = threadConfig(handler);
  return {
    runs,
    invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config),
  };
}

describe("callback only: a tool's idempotent/effect declaration is its own", () => {
  it("neither a sibling tool of the same invoke nor a tool it calls gets it, and on resume the undeclared one is not run again", async () => {
    const store = new FlakyStore();
    const first = world(store, true);
    await expect(first.invoke({ messages: [{ role: "user", content: "go" }] })).rejects.toThrow();
    store.failing = false;
    const effects = Object.fromEntries(
      (await runEvents(store, SESSION, RUN))
        .filter((event) => event.type === "tool.requested")
        .map((event) => payloadOf<{ name: string; effect: unknown }>(event))
        .map((payload) => [payload.name, payload.effect]),
    );
    expect(effects).toEqual({
      lookup: { kind: "read", idempotent: true },
      audit: { kind: "unknown", idempotent: false },
      send: { kind: "unknown", idempotent: false },
    });
    expect((await inspectSession(store, SESSION)).unresolved.map((a) => a.name)).toEqual(["send"]);

    // A new process resumes: send, in flight at the crash and not idempotent, does not run.
    const second = world(store, false);
    await second.invoke(null).catch(() => undefined);
    expect(first.runs.send + second.runs.send).toBe(1);
  });
});
