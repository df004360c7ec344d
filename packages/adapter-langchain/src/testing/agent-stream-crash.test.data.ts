import type { EventStore } from "@agent-ledger/core";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { createAgent } from "langchain";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { script, world } from "./agent.test.data.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "agent-stream-session";
export const RUN = "agent-stream-run";

/**
 * A scripted model that streams as a provider's does: its text word by word, its tool calls as
 * `tool_call_chunks` in the last chunk (createAgent streams its model under `streamEvents` or
 * `stream({ streamMode: "messages" })`). `crashMidStream`: the process dies after the first
 * chunk of the first call, the stream unfinished.
 */
class StreamingScriptedModel extends ScriptedChatModel {
  constructor(readonly crashMidStream: boolean) {
    super((messages) => script(messages));
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls++;
    noteEffect("model");
    const message = await this.script(messages, this.calls);
    const words = ["Let me ", "check. ", String(message.content)];
    for (const [index, word] of words.entries()) {
      const last = index === words.length - 1;
      const toolCalls = last ? (message.tool_calls ?? []) : [];
      const chunk = new AIMessageChunk({
        content: word,
        tool_call_chunks: toolCalls.map((call, at) => ({
          id: call.id,
          name: call.name,
          args: JSON.stringify(call.args),
          index: at,
          type: "tool_call_chunk" as const,
        })),
      });
      await runManager?.handleLLMNewToken(word);
      yield new ChatGenerationChunk({ text: word, message: chunk });
      if (this.crashMidStream && this.calls === 1) await crashHere();
    }
  }
}

/** One process's createAgent on the run, streamed; `effects`: its tools' effects. */
export function streamedAgent(store: EventStore, options: { crashMidStream?: boolean } = {}) {
  const tools = world({ note: noteEffect });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const agent = createAgent({
    model: new StreamingScriptedModel(options.crashMidStream ?? false),
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
