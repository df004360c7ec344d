// A streamed run about a photo read from disk (a Node Buffer, as fs.readFile returns it): the
// user's image is in the prompt, and a `print` tool (a side effect) returns the printed page as
// a Buffer that its toModelOutput shows the model as an image. Shared by the multimodal tests
// and by the crash child that is SIGKILLed mid-stream in the step after the print.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { report, streamCutAfter } from "./crash-in-child.test.data.js";
import { streamingModel } from "./failing-stream.test.data.js";
import {
  assistant,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the photo run records. */
export const PHOTO_RUN = { sessionId: "photo", runId: "print-1" };

/** The photo's bytes (a PNG header and a few more). */
export const PHOTO = [0x89, 0x50, 0x4e, 0x47, 1, 2, 3];

/** Step 1 asks for `print`; step 2 describes the print. */
export const photoSteps = (): LanguageModelV3StreamPart[][] => [
  streamPartsOf(toolCallsResult(toolCall("p1", "print", { copies: 1 }))),
  streamPartsOf(textResult("printed one copy of your photo")),
];

/** The run: the photo in the prompt, `print` counted in `effects`. Returns the text. */
export async function runPhotoAgent(
  recorder: SessionRecorder,
  model: ReturnType<typeof streamingModel>["model"],
  effects: string[],
) {
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "print this" },
          { type: "image", image: Buffer.from(PHOTO) },
        ],
      },
    ],
    tools: wrapTools(
      {
        print: tool({
          inputSchema: z.object({ copies: z.number() }),
          execute: async ({ copies }) => {
            effects.push(`printed ${copies}`);
            report.effect(`printed ${copies}`);
            return { page: Buffer.from(PHOTO) };
          },
          toModelOutput: ({ output }) => ({
            type: "content",
            value: [
              { type: "image-data", data: output.page.toString("base64"), mediaType: "image/png" },
            ],
          }),
        }),
      },
      { recorder },
    ),
    stopWhen: stepCountIs(3),
  });
  return result.text;
}

/** In the crash child: printed, then the process dies mid-stream in step 2 (after a delta). */
export async function crashMidStreamAfterPrint(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...PHOTO_RUN, actor: assistant });
  const [ask, describe] = photoSteps();
  const { model } = streamingModel([
    ask as LanguageModelV3StreamPart[],
    async () => {
      report.modelCall();
      return streamCutAfter(describe as LanguageModelV3StreamPart[], "text-delta");
    },
  ]);
  await runPhotoAgent(recorder, model, []);
}
