import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";

const scratch = scratchDirectory("langchain-otel-stream-", { beforeAll, afterAll });

describe("OpenTelemetry export of streamed LangChain model calls", () => {
  it("sets gen_ai.request.stream on the chat span of a call that streamed, and none on one invoked", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "stream.db") });
    await store.init();
    onTestFinished(() => store.close());
    const handler = new LedgerCallbackHandler({ store, sessionId: "s", runId: "r" });
    const model = new FakeListChatModel({ responses: ["streamed answer", "invoked answer"] });
    let streamed = "";
    for await (const chunk of await model.stream("first", { callbacks: [handler] }))
      streamed += chunk.content;
    expect(streamed).toBe("streamed answer");
    expect((await model.invoke("second", { callbacks: [handler] })).content).toBe("invoked answer");
    await handler.completeRun("done");

    const chats = (await exportedSpans(store, "s"))
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    // LangChain says nothing of it at the start: the chunks say it (a plain invoke has none).
    expect(chats.map((span) => span.attributes["gen_ai.request.stream"])).toEqual([
      true,
      undefined,
    ]);
  });
});
