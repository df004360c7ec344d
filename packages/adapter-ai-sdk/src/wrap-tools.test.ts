import { type EventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { stepCountIs, streamText, type ToolSet, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  payload,
  scriptedModel,
  assistantRecorder as setup,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { type WrapToolsOptions, wrapTools } from "./wrap-tools.js";

const eventsOf = (store: EventStore) => readWholeRun(store, { sessionId: "s1", runId: "r1" });

/** Runs `tools` under streamText (one call of `search`), and lists the tool-result parts. */
async function toolResultsOf(
  tools: ToolSet,
  wrap?: { recorder: SessionRecorder } & Omit<WrapToolsOptions, "recorder">,
) {
  const { model } = scriptedModel([
    toolCallsResult(toolCall("c1", "search", { q: "ledger" })),
    textResult("found it"),
  ]);
  const result = streamText({
    model: wrap
      ? wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder: wrap.recorder }) })
      : model,
    prompt: "search",
    tools: wrap ? wrapTools(tools, wrap) : tools,
    stopWhen: stepCountIs(3),
  });
  const parts: string[] = [];
  for await (const part of result.fullStream)
    if (part.type === "tool-result")
      parts.push(`${part.preliminary ? "prelim" : "final"}:${String(part.output)}`);
  return parts;
}

describe("wrapTools with an execute that returns an AsyncIterable", () => {
  // A plain function returning what an async generator function makes: the SDK streams it
  // (it looks at what execute returns), though execute itself is no `async function*`.
  async function* progress(query: string, seen: string[][], store?: EventStore) {
    if (store) seen.push((await eventsOf(store)).map((event) => event.type));
    yield `searching ${query}`;
    yield "half";
    yield "done";
  }
  const searchTools = (seen: string[][], store?: EventStore) => ({
    search: tool({
      inputSchema: z.object({ q: z.string() }),
      execute: ({ q }) => progress(q, seen, store),
    }),
  });

  it("declared streaming, passes each preliminary result on as the SDK does, and records the last", async () => {
    const unwrapped = await toolResultsOf(searchTools([]));
    expect(unwrapped).toEqual([
      "prelim:searching ledger",
      "prelim:half",
      "prelim:done",
      "final:done",
    ]);
    const { store, recorder } = setup();
    const seen: string[][] = [];
    expect(
      await toolResultsOf(searchTools(seen, store), { recorder, streaming: ["search"] }),
    ).toEqual(unwrapped);
    // The request was durable before the tool's body ran.
    expect(seen).toEqual([["run.started", "model.requested", "model.completed", "tool.requested"]]);
    const completed = (await eventsOf(store)).find((event) => event.type === "tool.completed");
    expect(payload(completed).result).toBe("done");
  });

  it("replayed, gives the recorded result without running the tool", async () => {
    const { store, recorder } = setup();
    const seen: string[][] = [];
    await toolResultsOf(searchTools(seen, store), { recorder, streaming: ["search"] });
    const resumed = await SessionRecorder.resume({ store, actor, sessionId: "s1", runId: "r1" });
    const replayed = await toolResultsOf(searchTools(seen, store), {
      recorder: resumed,
      streaming: ["search"],
    });
    expect(replayed.at(-1)).toBe("final:done");
    expect(seen).toHaveLength(1);
  });
});

describe("wrapTools with a tool's callbacks", () => {
  it("calls needsApproval and onInputAvailable as given (their arguments, this, answer), and keeps a boolean needsApproval", async () => {
    const { recorder } = setup();
    const seen: unknown[] = [];
    const gated = tool({
      inputSchema: z.object({ q: z.string() }),
      needsApproval(input, { toolCallId }) {
        seen.push(["needsApproval", input, toolCallId, this === wrapped.search]);
        return input.q === "risky";
      },
      onInputAvailable({ input, toolCallId }) {
        seen.push(["onInputAvailable", input, toolCallId]);
      },
    });
    const always = tool({ inputSchema: z.object({}), needsApproval: true });
    const wrapped = wrapTools({ search: gated, always }, { recorder });
    expect(wrapped.always.needsApproval).toBe(true);
    const needsApproval = wrapped.search.needsApproval as (
      input: { q: string },
      options: { toolCallId: string; messages: [] },
    ) => boolean;
    expect(
      needsApproval.call(wrapped.search, { q: "risky" }, { toolCallId: "c1", messages: [] }),
    ).toBe(true);
    expect(
      needsApproval.call(wrapped.search, { q: "ledger" }, { toolCallId: "c2", messages: [] }),
    ).toBe(false);
    await wrapped.search.onInputAvailable?.({
      input: { q: "ledger" },
      toolCallId: "c3",
      messages: [],
    });
    expect(seen).toEqual([
      ["needsApproval", { q: "risky" }, "c1", true],
      ["needsApproval", { q: "ledger" }, "c2", true],
      ["onInputAvailable", { q: "ledger" }, "c3"],
    ]);
  });
});

describe("wrapTools given tools it wrapped already", () => {
  it("refuses them with invalid-argument at the tool's path, where each call was recorded twice", async () => {
    const { store, recorder } = setup();
    const effects: string[] = [];
    const search = tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }) => {
        effects.push(q);
        return `found ${q}`;
      },
    });
    const once = wrapTools({ search }, { recorder });
    for (const again of [recorder, setup().recorder]) {
      let refusal: unknown;
      try {
        wrapTools(once, { recorder: again });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toMatchObject({ code: "invalid-argument", path: "$.tools.search" });
      expect((refusal as Error).message).toContain("recorded twice");
    }
    // Wrapped once, the call is recorded once; the same tools wrap again for another recorder.
    expect(await toolResultsOf({ search }, { recorder })).toEqual(["final:found ledger"]);
    expect(effects).toEqual(["ledger"]);
    const requested = (await eventsOf(store)).filter((event) => event.type === "tool.requested");
    expect(requested).toHaveLength(1);
    expect(() => wrapTools({ search }, { recorder: setup().recorder })).not.toThrow();
  });
});
