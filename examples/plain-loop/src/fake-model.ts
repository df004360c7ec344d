import { appendFileSync } from "node:fs";

/** A message of the plain agent loop's conversation. */
export type Message =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, string>;
}

export interface ModelResponse {
  content: string;
  toolCalls: ToolCall[];
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * A scripted model: what it answers depends only on how many tool results it has seen, so a
 * re-execution asks the same things. Every real call is "paid for": one line in `billPath`.
 */
export async function callFakeModel(messages: Message[], billPath: string): Promise<ModelResponse> {
  appendFileSync(
    billPath,
    `${new Date().toISOString()} model call with ${messages.length} messages\n`,
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const toolResults = messages.filter((message) => message.role === "tool").length;
  const usage = { inputTokens: 20 * messages.length, outputTokens: 12 };
  if (toolResults === 0) {
    return {
      content: "I will check the weather and tell the team.",
      toolCalls: [
        { id: "call_weather_1", name: "lookup_weather", args: { city: "Lisbon" } },
        {
          id: "call_email_1",
          name: "send_email",
          args: { to: "team@example.com", subject: "Offsite in Lisbon" },
        },
      ],
      usage,
    };
  }
  if (toolResults === 2) {
    return {
      content: "Now I note the plan.",
      toolCalls: [
        {
          id: "call_note_1",
          name: "write_note",
          args: { text: "Offsite: Lisbon, sunny, team informed" },
        },
      ],
      usage,
    };
  }
  return { content: "Done: the team knows, and the plan is in the notes.", toolCalls: [], usage };
}
