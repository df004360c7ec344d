import { join } from "node:path";
import { inspectSession, type LedgerEvent } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { AIMessage } from "@langchain/core/messages";
import { toolStrategy } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { restoreMessages } from "./restore-messages.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { payloadOf, runEvents } from "./testing/helpers.js";
import {
  RUN,
  SESSION,
  type StructuredSetup,
  type structuredCrashes,
  THREAD,
  weatherAgent,
} from "./testing/structured-crash.test.data.js";

const scratch = scratchDirectory("langchain-structured-crash-", { beforeAll, afterAll });
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

// createAgent names a bare schema's tool `extract-<n>`, n counting the calls of the process: the
// resumed process names it otherwise than the one that died, and the call must still be known
// as the one recorded. (Concurrent tests share this process's count, as an app's agents do.)
describe.concurrent("a SIGKILL around createAgent's structured answer, resumed in a new process", () => {
  const cases: [keyof typeof structuredCrashes, StructuredSetup, number][] = [
    // In flight: the model was not called; the resume calls it once.
    ["structured-request", "schema", 2],
    ["structured-request", "toolStrategy", 2],
    // Answered, the node did not end: the resume asks again (README: a callback cannot answer).
    ["structured-answer", "schema", 3],
    ["structured-answer", "toolStrategy", 3],
  ];
  it.for(cases)(
    "after %s (%s): the resumed call is a retry of the recorded attempt, nothing is left unresolved",
    async ([crash, setup, asked], { onTestFinished }) => {
      const path = join(scratch, `retry-${crash}-${setup}.db`);
      const crashed = await crashInChild(crash, path, setup);
      const store = await openLedger(path, onTestFinished);
      // The child named its tool extract-1 (toolStrategy) or extract-2 (the schema's second
      // call): this process names the resumed one extract-3 or later.
      toolStrategy(z.object({}));
      toolStrategy(z.object({}));
      const resumed = weatherAgent(store, setup);
      const result = await resumed.invoke(false);
      expect(result.structuredResponse).toEqual({ city: "Paris", temp: 21 });

      const events = await runEvents(store, SESSION, RUN);
      const requests = events.filter((event) => event.type === "model.requested");
      expect(requests).toHaveLength(3);
      const [, recorded, again] = requests;
      expect({ retryOf: again?.retryOf, stepId: again?.stepId }).toEqual({
        retryOf: recorded?.attemptId,
        stepId: recorded?.stepId,
      });
      // Sent under other names, recorded as one request (the names are in the metadata).
      const sentAs = (event: LedgerEvent | undefined) =>
        (event?.metadata?.structuredOutput as { generatedTools?: string[] } | undefined)
          ?.generatedTools;
      expect(sentAs(recorded)).toEqual([setup === "schema" ? "extract-2" : "extract-1"]);
      expect(sentAs(again)).toHaveLength(1);
      expect(sentAs(again)).not.toEqual(sentAs(recorded));
      expect(payloadOf<{ request: unknown }>(again).request).toEqual(
        payloadOf<{ request: unknown }>(recorded).request,
      );
      expect(events.filter((event) => event.type === "attempt.abandoned")).toEqual([]);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
      // An uncrashed run asks twice; the crash adds at most the call it cut off.
      expect(crashed.count("model") + resumed.model.calls).toBe(asked);
      expect(await restored(store)).toEqual({ pending: [], lastTurn: ["call-2"] });
    },
  );
});
