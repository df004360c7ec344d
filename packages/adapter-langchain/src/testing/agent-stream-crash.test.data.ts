import type { EventStore } from "@agent-ledger/core";
import type { ChatGenerationChunk } from "@langchain/core/outputs";
import { createAgent } from "langchain";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { notedScript, world } from "./agent.test.data.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "agent-stream-session";
export const RUN = "agent-stream-run";

/**
 * The scripted model, which dies after the first chunk of its first call, the stream unfinished
 * (createAgent streams its model under `streamEvents`).
 */
class MidStreamCrashModel extends ScriptedChatModel {
  override async *_streamResponseChunks(
    ...args: Parameters<ScriptedChatModel["_streamResponseChunks"]>
  ): AsyncGenerator<ChatGenerationChunk> {
    for await (const chunk of super._streamResponseChunks(...args)) {
      yield chunk;
      if (this.calls === 1) await crashHere();
    }
  }
}

/** One process's createAgent on the run, streamed; `effects`: its tools' effects. */
export function streamedAgent(store: EventStore, options: { crashMidStream?: boolean } = {}) {
  const tools = world({ note: noteEffect });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const agent = createAgent({
    model: options.crashMidStream
      ? new MidStreamCrashModel(notedScript)
      : new ScriptedChatModel(notedScript),
    tools: tools.tools,
    middleware: [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  const config = threadConfig(handler);
  return { agent, handler, config, effects: tools.effects };
}

export const GO = { messages: [{ role: "user", content: "go" }] };

export const agentStreamCrashes = {
  /** The first process reads the agent's `streamEvents`: it dies mid-stream of its first model call. */
  "agent-stream:crash-mid-stream": async (store) => {
    const { agent, config } = streamedAgent(store, { crashMidStream: true });
    for await (const _event of agent.streamEvents(GO, { ...config, version: "v2" }));
  },
} satisfies Record<string, CrashScenario>;
