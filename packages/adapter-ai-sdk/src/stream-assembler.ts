import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
  SharedV3Warning,
} from "@ai-sdk/provider";
import type { ModelResponseParts, ToolInputPart } from "./model-response.js";

type Block = {
  type: "text" | "reasoning";
  text: string;
  providerMetadata?: SharedV3ProviderMetadata;
};

const EMPTY_USAGE: LanguageModelV3Usage = {
  inputTokens: {
    total: undefined,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/** Assembles stream parts into the content a generate call would have returned. */
export class StreamAssembler {
  readonly #content: (LanguageModelV3Content | Block)[] = [];
  readonly #open = new Map<string, Block>();
  #warnings: SharedV3Warning[] = [];
  #response: ModelResponseParts["response"] = {};
  #finish: { finishReason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;
  #providerMetadata: SharedV3ProviderMetadata | undefined;
  readonly #toolInputs: ToolInputPart[] = [];

  add(part: LanguageModelV3StreamPart): void {
    switch (part.type) {
      case "stream-start":
        this.#warnings = part.warnings;
        return;
      case "response-metadata":
        // As the SDK does: a field a later part leaves out keeps its earlier value.
        this.#response = {
          id: part.id ?? this.#response?.id,
          modelId: part.modelId ?? this.#response?.modelId,
          timestamp: part.timestamp ?? this.#response?.timestamp,
        };
        return;
      case "text-start":
      case "reasoning-start": {
        const block: Block = { type: part.type === "text-start" ? "text" : "reasoning", text: "" };
        if (part.providerMetadata) block.providerMetadata = part.providerMetadata;
        this.#open.set(`${block.type}:${part.id}`, block);
        this.#content.push(block);
        return;
      }
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning";
        let block = this.#open.get(`${kind}:${part.id}`);
        if (!block) {
          block = { type: kind, text: "" };
          this.#open.set(`${kind}:${part.id}`, block);
          this.#content.push(block);
        }
        block.text += part.delta;
        // Some providers put it on the deltas (Gemini's thoughtSignature); the SDK keeps the
        // latest, and sends it back with the next request.
        if (part.providerMetadata) block.providerMetadata = part.providerMetadata;
        return;
      }
      case "text-end":
      case "reasoning-end": {
        const kind = part.type === "text-end" ? "text" : "reasoning";
        const block = this.#open.get(`${kind}:${part.id}`);
        if (block && part.providerMetadata) block.providerMetadata = part.providerMetadata;
        this.#open.delete(`${kind}:${part.id}`);
        return;
      }
      case "tool-call":
      case "tool-result":
      case "tool-approval-request":
      case "file":
      case "source":
        this.#content.push(part);
        return;
      case "finish":
        this.#finish = { finishReason: part.finishReason, usage: part.usage };
        this.#providerMetadata = part.providerMetadata;
        return;
      case "tool-input-start":
      case "tool-input-delta":
      case "tool-input-end":
        // The tool-call part carries the whole input; these are kept apart, with where they
        // came, for a replay to emit again (the SDK runs onInputStart / onInputDelta at them).
        this.#toolInputs.push({ at: this.#content.length, part });
        return;
      default:
        // raw, error.
        return;
    }
  }

  /** The tool input parts that arrived, each with the number of content items before it. */
  toolInputs(): ToolInputPart[] {
    return [...this.#toolInputs];
  }

  /** What has arrived so far, as a response (the finish part's values once it came). */
  result(): ModelResponseParts {
    return {
      content: this.#content.map((item) => ({ ...item })) as LanguageModelV3Content[],
      finishReason: this.#finish?.finishReason ?? { unified: "other", raw: undefined },
      usage: this.#finish?.usage ?? EMPTY_USAGE,
      warnings: this.#warnings,
      providerMetadata: this.#providerMetadata,
      response: this.#response,
    };
  }
}
