import type { Model, ModelProvider, ModelRequest, ModelResponse } from "@openai/agents";
import { Usage } from "@openai/agents";

type OutputItem = ModelResponse["output"][number];
type StreamEvent = Model["getStreamedResponse"] extends (
  request: ModelRequest,
) => AsyncIterable<infer E>
  ? E
  : never;

/** One scripted turn: the output items the model answers with (given the request). */
export type ScriptedTurn = (request: ModelRequest) => OutputItem[];

export function functionCall(name: string, args: unknown, callId: string): OutputItem {
  return {
    type: "function_call",
    id: `fc_${callId}`,
    callId,
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  } as OutputItem;
}

export function message(text: string): OutputItem {
  return {
    type: "message",
    id: `msg_${text.length}`,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text }],
  } as OutputItem;
}

/**
 * A fake Model for tests (0.14.3 has no ScriptedModel): answers each call with the next
 * scripted turn, offline, and counts its calls. `beforeCall` lets a test fail or pause a call.
 */
export class ScriptedModel implements Model {
  calls = 0;
  readonly requests: ModelRequest[] = [];
  beforeCall: ((index: number) => Promise<void> | void) | undefined;
  readonly #turns: ScriptedTurn[];

  constructor(turns: ScriptedTurn[]) {
    this.#turns = turns;
  }

  async #next(request: ModelRequest): Promise<OutputItem[]> {
    const index = this.calls++;
    this.requests.push(request);
    await this.beforeCall?.(index);
    const turn = this.#turns[index];
    if (!turn) throw new Error(`ScriptedModel: no turn ${index + 1} scripted`);
    return turn(request);
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const output = await this.#next(request);
    return {
      output,
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      responseId: `resp_${this.calls}`,
    };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const output = await this.#next(request);
    yield { type: "response_started" } as StreamEvent;
    for (const item of output) {
      if (item.type === "message") {
        for (const part of (item as { content: { text?: string }[] }).content)
          yield { type: "output_text_delta", delta: part.text ?? "" } as StreamEvent;
      }
    }
    yield {
      type: "response_done",
      response: {
        id: `resp_${this.calls}`,
        usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        output,
      },
    } as StreamEvent;
  }
}

/** A provider that returns the same scripted model for every name. */
export function scriptedProvider(model: Model): ModelProvider {
  return { getModel: () => model };
}
