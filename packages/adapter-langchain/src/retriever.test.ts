import { join } from "node:path";
import {
  inspectSession,
  LedgerError,
  type LedgerEvent,
  MemoryEventStore,
  readWholeRun,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { payloadOf, runEvents } from "./testing/helpers.js";
import { RewritingShelf, RUN, SESSION, Shelf } from "./testing/retriever.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-retriever-", { beforeAll, afterAll });

function setup() {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  return { store, handler };
}

const types = (events: LedgerEvent[]) => events.map((event) => event.type);

describe("LedgerCallbackHandler: retrievers", () => {
  it("records a query as a tool call committed before the retriever runs, and its documents as the result", async () => {
    const { store, handler } = setup();
    let seenBeforeQuery: LedgerEvent | undefined;
    const shelf = new Shelf({
      onQuery: async () => {
        seenBeforeQuery = (await readWholeRun(store, { sessionId: SESSION, runId: RUN })).at(-1);
      },
    });
    const documents = await shelf.invoke("lisbon", { callbacks: [handler] });
    expect(documents.map((doc) => doc.pageContent)).toEqual([
      "Lisbon is sunny in June",
      "Lisbon trams run until midnight",
    ]);
    const events = await runEvents(store, SESSION, RUN);
    expect(types(events)).toEqual(["run.started", "tool.requested", "tool.completed"]);
    const [, requested, completed] = events;
    expect(seenBeforeQuery?.eventId).toBe(requested?.eventId);
    expect(requested?.payload).toMatchObject({
      name: "Shelf",
      args: { query: "lisbon" },
      effect: { kind: "read", idempotent: true },
    });
    // A datastore to the OpenTelemetry export (gen_ai.tool.type), as the GenAI conventions say.
    expect(requested?.metadata?.toolType).toBe("datastore");
    const spans = await exportedSpans(store, SESSION);
    const span = spans.find((each) => each.name === "execute_tool Shelf");
    expect(span?.attributes["gen_ai.tool.type"]).toBe("datastore");
    expect(payloadOf<{ result: unknown }>(completed).result).toEqual([
      { pageContent: "Lisbon is sunny in June", metadata: { source: "weather.md" } },
      { pageContent: "Lisbon trams run until midnight", metadata: { source: "trams.md" } },
    ]);
    expect(completed?.attemptId).toBe(requested?.attemptId);
  });

  it("takes the run's name, and an effect the retriever's metadata declares", async () => {
    const { store, handler } = setup();
    const shelf = new Shelf({ metadata: { effect: "write", idempotent: false } });
    await shelf.invoke("porto", { callbacks: [handler], runName: "weather-docs" });
    const requested = (await runEvents(store, SESSION, RUN)).find(
      (event) => event.type === "tool.requested",
    );
    expect(requested?.payload).toMatchObject({
      name: "weather-docs",
      args: { query: "porto" },
      effect: { kind: "write", idempotent: false },
    });
  });

  it("records a failed query as tool.failed, and the caller still gets the error", async () => {
    const { store, handler } = setup();
    const shelf = new Shelf({
      onQuery: async () => {
        throw new Error("index offline");
      },
    });
    await expect(shelf.invoke("lisbon", { callbacks: [handler] })).rejects.toThrow("index offline");
    const events = await runEvents(store, SESSION, RUN);
    expect(types(events)).toEqual(["run.started", "tool.requested", "tool.failed"]);
    expect(JSON.stringify(events[2]?.payload)).toContain("index offline");
  });

  it("a model the retriever calls inside a tool call belongs to that call, not to the agent's turns", async () => {
    const { store, handler } = setup();
    const model = new ScriptedChatModel(() => new AIMessage("lisbon trams"));
    const lookup = tool(
      async ({ topic }, config) => {
        const docs = await new RewritingShelf(model).invoke(topic, config);
        return docs.map((doc) => doc.pageContent).join("; ");
      },
      { name: "lookup", description: "look it up", schema: z.object({ topic: z.string() }) },
    );
    const answer = await lookup.invoke(
      { id: "call-1", name: "lookup", args: { topic: "getting around" }, type: "tool_call" },
      { callbacks: [handler] },
    );
    expect(answer.content).toBe("Lisbon trams run until midnight");
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested.map((event) => payloadOf<{ name: string }>(event).name)).toEqual([
      "lookup",
      "RewritingShelf",
      "Shelf",
    ]);
    const [toolCall, retrieval] = requested;
    const modelCall = events.find((event) => event.type === "model.requested");
    const langchain = (event: LedgerEvent | undefined) =>
      (event?.metadata as { langchain: Record<string, unknown> } | undefined)?.langchain;
    // The nearest call that encloses the model is the retriever's, itself inside the tool's.
    expect(langchain(modelCall)?.insideTool).toBe(retrieval?.eventId);
    expect(modelCall?.causedByEventId).toBe(retrieval?.eventId);
    expect(langchain(retrieval)?.parentRunId).toBe(langchain(toolCall)?.runId);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });
});

describe("LedgerCallbackHandler: a retriever's query in flight at a crash", () => {
  it("is shown unresolved, and runs again on resume as a retry of the attempt that was out", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "query-in-flight.db");
    const child = await crashInChild("retriever:dies-in-query", path);
    expect(child.count("query lisbon")).toBe(1);
    const store = await openLedger(path, onTestFinished);
    const [unresolved, ...others] = (await inspectSession(store, SESSION)).unresolved;
    expect(others).toEqual([]);
    expect(unresolved).toMatchObject({
      kind: "tool",
      name: "Shelf",
      effect: { kind: "read", idempotent: true },
    });

    const queries: string[] = [];
    const resumed = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const shelf = new Shelf({ onQuery: async (query) => void queries.push(query) });
    const documents = await shelf.invoke("lisbon", { callbacks: [resumed] });
    expect(documents).toHaveLength(2);
    expect(queries).toEqual(["lisbon"]);
    const requested = (await runEvents(store, SESSION, RUN)).filter(
      (event) => event.type === "tool.requested",
    );
    expect(requested).toHaveLength(2);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("declared not idempotent, is not run again: the resume stops with unresolved-attempt", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "write-in-flight.db");
    await crashInChild("retriever:dies-in-query", path, "not-idempotent");
    const store = await openLedger(path, onTestFinished);
    const queries: string[] = [];
    const resumed = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const shelf = new Shelf({
      metadata: { effect: "write", idempotent: false },
      onQuery: async (query) => void queries.push(query),
    });
    const refused = await shelf.invoke("lisbon", { callbacks: [resumed] }).catch((e) => e);
    expect(LedgerError.isInstance(refused, "unresolved-attempt")).toBe(true);
    expect(queries).toEqual([]);
    expect((await inspectSession(store, SESSION)).unresolved).toHaveLength(1);
  });
});
