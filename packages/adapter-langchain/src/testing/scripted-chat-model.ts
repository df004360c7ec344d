import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelParams,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";

/** A model's answers; a script may wait (a crash test halts in it while the call is in flight). */
export type Script = (messages: BaseMessage[], call: number) => AIMessage | Promise<AIMessage>;

/** Test model: answers from a script, counts its calls, can emit tool calls (offline). */
export class ScriptedChatModel extends BaseChatModel {
  calls = 0;
  readonly script: Script;
  readonly apiKey = "sk-test-secret-never-recorded";
  toolNames: string[] = [];

  constructor(script: Script, params: BaseChatModelParams = {}) {
    super(params);
    this.script = script;
  }

  _llmType(): string {
    return "scripted";
  }

  override invocationParams(): Record<string, unknown> {
    return { model: "scripted-1", temperature: 0, apiKey: this.apiKey, tools: this.toolNames };
  }

  override bindTools(tools: { name?: string; function?: { name?: string } }[]) {
    // A StructuredTool has a name, an OpenAI-style definition (a structured output's) a function.
    this.toolNames = tools.map((tool) => tool.name ?? tool.function?.name ?? "");
    return this as never;
  }

  async #next(messages: BaseMessage[]): Promise<AIMessage> {
    this.calls++;
    const message = await this.script(messages, this.calls);
    return new AIMessage({
      content: message.content,
      tool_calls: message.tool_calls ?? [],
      usage_metadata: {
        input_tokens: messages.length,
        output_tokens: 3,
        total_tokens: messages.length + 3,
      },
    });
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = await this.#next(messages);
    return { generations: [{ text: String(message.content), message }] };
  }

  /**
   * Streams as a provider's chat model does: the text word by word, then each tool call as
   * `tool_call_chunks` (its id and name with the start of its arguments, then the rest of its
   * arguments under the same index), the usage in the last chunk. LangChain joins the chunks
   * into the message's `tool_calls`.
   */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = await this.#next(messages);
    const chunks = [
      ...String(message.content)
        .split(/(?<= )/)
        .map((word) => new AIMessageChunk({ content: word })),
      ...(message.tool_calls ?? []).flatMap((call, index) => {
        const args = JSON.stringify(call.args);
        const half = Math.ceil(args.length / 2);
        return [
          { id: call.id, name: call.name, args: args.slice(0, half), index },
          { args: args.slice(half), index },
        ].map(
          (part) =>
            new AIMessageChunk({
              content: "",
              tool_call_chunks: [{ ...part, type: "tool_call_chunk" as const }],
            }),
        );
      }),
    ];
    for (const [index, chunk] of chunks.entries()) {
      if (index === chunks.length - 1) chunk.usage_metadata = message.usage_metadata;
      const text = String(chunk.content);
      const generation = new ChatGenerationChunk({ text, message: chunk });
      // As ChatOpenAI hands it: the chunk beside its text.
      const indices = { prompt: 0, completion: 0 };
      await runManager?.handleLLMNewToken(text, indices, undefined, undefined, undefined, {
        chunk: generation,
      });
      yield generation;
    }
  }
}
