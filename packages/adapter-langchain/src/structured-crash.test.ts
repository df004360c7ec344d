import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { AIMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it } from "vitest";
import { restoreMessages } from "./restore-messages.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents } from "./testing/helpers.js";
import {
  RUN,
  SESSION,
  type StructuredSetup,
  THREAD,
  weatherAgent,
} from "./testing/structured-crash.test.data.js";

const scratch = scratchDirectory("langchain-structured-crash-", afterAll);
const address = { sessionId: SESSION, runId: RUN };

/** What restoreMessages gives for the thread: its pending calls, and the last turn's calls. */
async function restored(store: Parameters<typeof restoreMessages>[0]) {
  const { pendingToolCalls, messages } = await restoreMessages(store, address, {
    threadId: THREAD,
  });
  const last = messages.at(-1) as AIMessage | undefined;
  return {
    pending: pendingToolCalls.map((call) => call.id),
    lastTurn: last?.tool_calls?.map((call) => call.id),
  };
}

// Concurrent: each test has its own ledger, and mostly waits for its child to load LangChain.
describe.concurrent("a SIGKILL between createAgent's structured answer and the end of its model node", () => {
  it.for<StructuredSetup>(["toolStrategy", "schema"])(
    "with ledgerMiddleware (%s): the answer is the last turn, nothing is pending, before and after the resume",
    async (setup, { onTestFinished }) => {
      const path = join(scratch, `${setup}.db`);
      const crashed = await crashInChild("structured-answer", path, setup);
      const store = await openLedger(path, onTestFinished);
      expect(await restored(store)).toEqual({ pending: [], lastTurn: ["call-2"] });

      const resumed = weatherAgent(store, setup);
      const result = await resumed.invoke(false);
      expect(result.structuredResponse).toEqual({ city: "Paris", temp: 21 });
      expect(await restored(store)).toEqual({ pending: [], lastTurn: ["call-2"] });
      // The model node runs again from the checkpoint before it: the structured answer is asked
      // and paid for again (README: a callback cannot answer a model call).
      expect(crashed.count("model") + resumed.model.calls).toBe(3);
      const completed = (await runEvents(store, SESSION, RUN)).filter(
        (event) => event.type === "model.completed",
      );
      expect(completed).toHaveLength(3);
    },
  );

  it("without ledgerMiddleware, nothing names the structured output's tool before the node ends: its call is pending until the resume", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "no-middleware.db");
    await crashInChild("structured-answer", path, "toolStrategy-no-middleware");
    const store = await openLedger(path, onTestFinished);
    expect(await restored(store)).toEqual({ pending: ["call-2"], lastTurn: ["call-2"] });
    await weatherAgent(store, "toolStrategy-no-middleware").invoke(false);
    expect(await restored(store)).toEqual({ pending: [], lastTurn: ["call-2"] });
  });
});
