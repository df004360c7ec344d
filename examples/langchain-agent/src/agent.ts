import { join } from "node:path";
import type { EventStore } from "@agent-ledger/core";
import {
  LedgerCallbackHandler,
  LedgerCheckpointSaver,
  ledgerMiddleware,
} from "@agent-ledger/langchain";
import { createAgent } from "langchain";
import { ScriptedModel } from "./scripted-model.js";
import { sendEmailTool, weatherTool } from "./tools.js";

export const SESSION_ID = "langchain-agent-example";
export const THREAD_ID = "thread-1";
export const RUN_ID = "agent-run-1";

/** Files the example writes its observable effects to. */
export function workFiles(workDir: string) {
  return {
    modelCalls: join(workDir, "model-calls.log"),
    outbox: join(workDir, "outbox.log"),
    weather: join(workDir, "weather.log"),
  };
}

/** The agent: createAgent + the ledger handler (records), middleware (guards tools) and saver. */
export function buildAgent(options: { store: EventStore; workDir: string }) {
  const files = workFiles(options.workDir);
  const handler = new LedgerCallbackHandler({
    store: options.store,
    sessionId: SESSION_ID,
    runId: RUN_ID,
  });
  const agent = createAgent({
    model: new ScriptedModel(files.modelCalls),
    tools: [sendEmailTool(files.outbox), weatherTool(files.weather)],
    middleware: [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store: options.store }),
  });
  const config = {
    configurable: { thread_id: THREAD_ID },
    callbacks: [handler],
    // Await each checkpoint write before the next step: what a crash-safe resume needs.
    durability: "sync" as const,
  };
  return { agent, handler, config };
}
