import { MemoryEventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// Text cut with slice() can end in half an emoji (a lone surrogate), which is not plain JSON.
// What the tool did and what the model said are still recorded, as a UTF-8 encoder would send
// them: each lone surrogate as U+FFFD, like the other adapters record it.

const address = { sessionId: "s1", runId: "r1" };
const cut = "sent 👍".slice(0, -1); // "sent \ud83d"

function run(recorder: SessionRecorder) {
  const sent: string[] = [];
  const model = scriptedModel([
    toolCallsResult(toolCall("c1", "send", { to: "ana" })),
    textResult(`done ${cut}`),
  ]);
  const tools = wrapTools(
    {
      send: tool({
        inputSchema: z.object({ to: z.string() }),
        execute: async ({ to }) => {
          sent.push(to);
          return { status: cut, [`key ${cut}`]: 1 };
        },
      }),
    },
    { recorder },
  );
  const result = generateText({
    model: wrapLanguageModel({ model: model.model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "send it",
    tools,
    stopWhen: stepCountIs(3),
  });
  return { result, sent, model };
}

describe("a lone surrogate in what a tool or the model gave", () => {
  it("is recorded as U+FFFD, the call completed; a resume answers from the ledger", async () => {
    const store = new MemoryEventStore();
    const live = run(new SessionRecorder({ store, actor, ...address }));
    await live.result;
    expect(live.sent).toEqual(["ana"]);
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).not.toContain("tool.failed");
    expect(events.map((event) => event.type)).not.toContain("model.failed");
    const completed = events.find((event) => event.type === "tool.completed");
    expect(payload(completed).result).toEqual({ status: "sent \ufffd", "key sent \ufffd": 1 });
    const answer = events.filter((event) => event.type === "model.completed").at(-1);
    expect(JSON.stringify(payload(answer))).toContain("done sent \ufffd");

    const replay = run(await SessionRecorder.resume({ store, actor, ...address }));
    expect((await replay.result).text).toBe("done sent \ufffd");
    expect(replay.model.calls).toBe(0);
    expect(replay.sent).toEqual([]);
  });
});
