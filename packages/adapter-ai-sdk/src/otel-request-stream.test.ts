import { join } from "node:path";
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { generateText, streamText, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { assistant, scriptedModel, textResult } from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-otel-stream-", { beforeAll, afterAll });
const run = { sessionId: "chat", runId: "r1" };

/** A streamed call, then a generated one, then the run's end. */
async function streamThenGenerate(recorder: SessionRecorder) {
  const { model } = scriptedModel([textResult("streamed answer"), textResult("generated")]);
  const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
  const streamed = streamText({ model: wrapped, prompt: "stream it" });
  expect(await streamed.text).toBe("streamed answer");
  const generated = await generateText({ model: wrapped, prompt: "generate it" });
  expect(generated.text).toBe("generated");
  await recorder.completeRun("done");
}

describe("OpenTelemetry export of streamed and generated AI SDK calls", () => {
  it("sets gen_ai.request.stream on each chat span, true for streamText, false for generateText", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "stream.db") });
    await store.init();
    onTestFinished(() => store.close());
    await streamThenGenerate(new SessionRecorder({ store, ...run, actor: assistant }));
    const chats = (await exportedSpans(store, run.sessionId))
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(chats.map((span) => span.attributes["gen_ai.request.stream"])).toEqual([true, false]);

    // The flag is no part of the request: a resume answers both calls from the ledger.
    const resumed = await SessionRecorder.resume({ store, ...run, actor: assistant });
    const answers = scriptedModel([]);
    const wrapped = wrapLanguageModel({
      model: answers.model,
      middleware: ledgerMiddleware({ recorder: resumed }),
    });
    expect(await streamText({ model: wrapped, prompt: "stream it" }).text).toBe("streamed answer");
    expect((await generateText({ model: wrapped, prompt: "generate it" })).text).toBe("generated");
    expect(answers.calls).toBe(0);
  });
});
