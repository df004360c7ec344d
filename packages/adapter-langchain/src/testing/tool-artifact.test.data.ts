import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import type { CrashScenario } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { crashAfterToolCall, type Middleware } from "./ledger-middleware.test.data.js";

export const SESSION = "artifact-session";
export const RUN = "artifact-run";

/** What `query` hands back besides its content: values JSON has no type of its own for. */
export function artifact() {
  return { rows: [1, 2, 3], when: new Date(0), totals: new Map([["eur", 12]]) };
}

/**
 * createAgent with a `query` tool answering `content_and_artifact`, recorded by the ledger's
 * handler, middleware and saver. `crash`: the process dies right after the tool call.
 */
export function artifactAgent(store: EventStore, options: { crash?: boolean } = {}) {
  const query = tool(async (): Promise<[string, unknown]> => ["content x", artifact()], {
    name: "query",
    description: "read",
    schema: z.object({ sql: z.string() }),
    responseFormat: "content_and_artifact",
  });
  const decide = (messages: BaseMessage[]) =>
    messages.some((message) => ToolMessage.isInstance(message))
      ? new AIMessage("done")
      : new AIMessage({
          content: "",
          tool_calls: [{ id: "call-query", name: "query", args: { sql: "select 1" } }],
        });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const middleware: Middleware[] = [ledgerMiddleware({ handler })];
  if (options.crash) middleware.unshift(crashAfterToolCall());
  const agent = createAgent({
    model: fakeModel().respond(decide).respond(decide),
    tools: [query],
    middleware,
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  const go = { messages: [{ role: "user", content: "query it" }] };
  return {
    start: () => agent.invoke(go, threadConfig(handler)),
    resume: () => agent.invoke(null, threadConfig(handler)),
  };
}

export const toolArtifactCrashes = {
  /** The process dies right after `query` returned (its completion is in the ledger). */
  "tool-artifact:after-query": async (store) => {
    await artifactAgent(store, { crash: true }).start();
  },
} satisfies Record<string, CrashScenario>;
