import { appendFileSync } from "node:fs";
import type { Model, ModelProvider, ModelRequest, ModelResponse } from "@openai/agents";
import { Usage } from "@openai/agents";
import { crashPoint } from "./crash-point.js";

type OutputItem = ModelResponse["output"][number];
type StreamEvent = Model["getStreamedResponse"] extends (
  request: ModelRequest,
) => AsyncIterable<infer E>
  ? E
  : never;

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
    id: "msg_final",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text }],
  } as OutputItem;
}

export function outputOf(request: ModelRequest, callId: string): string | undefined {
  const items = Array.isArray(request.input) ? request.input : [];
  for (const item of items) {
    const entry = item as { type?: string; callId?: string; output?: unknown };
    if (entry.type === "function_call_result" && entry.callId === callId) {
      const output = entry.output as { text?: string } | string;
      return typeof output === "string" ? output : (output?.text ?? JSON.stringify(output));
    }
  }
  return undefined;
}

/**
 * An offline model with a script driven by the request (so a resumed process, whose earlier
 * calls are answered from the ledger, gets the same next answer): look up the price, tell the
 * warehouse, place the order, hand off to the receipt agent, which answers. Each call appends a line to
 * `<workDir>/model-calls.log` when it starts and when it delivers its response.
 */
export class ShopModel implements Model {
  /** Its name, as the SDK's own models keep theirs: the ledger shows it on each model call. */
  readonly model = "scripted-shop";
  readonly #workDir: string;

  constructor(workDir: string) {
    this.#workDir = workDir;
  }

  #log(line: string): void {
    appendFileSync(`${this.#workDir}/model-calls.log`, `${line}\n`);
  }

  #decide(request: ModelRequest): OutputItem[] {
    if (request.systemInstructions?.startsWith("You write receipts")) {
      const order = outputOf(request, "call_order") ?? "no order";
      return [message(`Receipt: ${order}`)];
    }
    const price = outputOf(request, "call_price");
    if (price === undefined) return [functionCall("lookup_price", { item: "lamp" }, "call_price")];
    if (outputOf(request, "call_notify") === undefined)
      return [functionCall("notify_warehouse", { item: "lamp" }, "call_notify")];
    if (outputOf(request, "call_order") === undefined)
      return [functionCall("place_order", { item: "lamp", price: 42 }, "call_order")];
    return [functionCall("transfer_to_receipt", {}, "call_handoff")];
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.#log("start");
    const output = this.#decide(request);
    this.#log("done");
    return {
      output,
      usage: new Usage({ requests: 1, inputTokens: 12, outputTokens: 6, totalTokens: 18 }),
      responseId: "resp_shop",
    };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    this.#log("start");
    const output = this.#decide(request);
    yield { type: "response_started" } as StreamEvent;
    for (const item of output) {
      if (item.type !== "message") continue;
      for (const part of (item as { content: { text: string }[] }).content) {
        yield { type: "output_text_delta", delta: part.text.slice(0, 5) } as StreamEvent;
        await crashPoint("stream");
        yield { type: "output_text_delta", delta: part.text.slice(5) } as StreamEvent;
      }
    }
    this.#log("done");
    yield {
      type: "response_done",
      response: {
        id: "resp_shop",
        usage: { requests: 1, inputTokens: 12, outputTokens: 6, totalTokens: 18 },
        output,
      },
    } as StreamEvent;
  }
}

export function shopModelProvider(workDir: string): ModelProvider {
  return { getModel: () => new ShopModel(workDir) };
}
