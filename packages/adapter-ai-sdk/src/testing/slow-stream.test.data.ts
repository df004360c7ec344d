import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";

/** A slow stream of parts that records whether it was cancelled. */
export function slowStream(parts: LanguageModelV3StreamPart[], delayMs = 5) {
  let index = 0;
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const part = parts[index++];
      state.pulled = index;
      if (part === undefined) controller.close();
      else controller.enqueue(part);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}
