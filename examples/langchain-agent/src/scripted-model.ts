import { appendFileSync } from "node:fs";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/**
 * An offline chat model that plays a fixed script and appends one line per call to a counter
 * file (so a test can count model calls across processes). Turn 1 sends an email, turn 2 asks
 * for the weather, turn 3 answers from both tool results.
 */
export class ScriptedModel extends BaseChatModel {
  constructor(readonly callsFile: string) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  override invocationParams(): Record<string, unknown> {
    return { model: "scripted-agent-1" };
  }

  override bindTools() {
    return this as never;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    appendFileSync(this.callsFile, `call ${messages.length}\n`);
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    let message: AIMessage;
    if (results.length === 0) {
      message = new AIMessage({
        content: "",
        tool_calls: [
          {
            id: "call-email",
            name: "send_email",
            args: { to: "bob@example.com", body: "Lunch at noon?" },
          },
        ],
      });
    } else if (results.length === 1) {
      message = new AIMessage({
        content: "",
        tool_calls: [{ id: "call-weather", name: "get_weather", args: { city: "Paris" } }],
      });
    } else {
      message = new AIMessage(
        `Done. ${results.map((result) => `${result.name}: ${String(result.content)}`).join("; ")}`,
      );
    }
    return { generations: [{ text: String(message.content), message }] };
  }
}
