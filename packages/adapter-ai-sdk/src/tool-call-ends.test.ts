import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { generateText, stepCountIs, streamObject, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  type AskOptions,
  RESEARCH,
  researchModel,
  runResearch,
} from "./testing/research-agent.test.data.js";
import {
  crashedLedgers,
  researchRuns as runsOf,
  types,
} from "./testing/research-ledger.test.data.js";
import {
  assistant as actor,
  partsStream,
  payload,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// How a wrapped tool's call ends when an inner call made a child run: the tool's outcome is
// committed first, the child run closed after, so a crash between the two never leaves a
// closed child run under a tool call that runs again.

const crashInside = crashedLedgers("ai-sdk-ends-");

async function resumeResearch(store: EventStore, ask: AskOptions = {}) {
  const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
  const { model, calls } = researchModel("single");
  const effects: string[] = [];
  const text = await runResearch({ recorder, variant: "single", model, effects, ...ask });
  return { text, calls, effects };
}

const refused = () => {
  throw new Error("downstream API refused");
};

describe("a crash between a tool's outcome and its child run's end", () => {
  it("killed once the child run's end is committed: every resume goes on, the tool answered from the ledger", async () => {
    const store = await crashInside("research, once its child run's end is committed");

    // This time the tool would fail: it does not run again, its outcome is in the ledger.
    const resumed = await resumeResearch(store, { afterParts: async () => refused() });
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);
    const again = await resumeResearch(store, { afterParts: async () => refused() });
    expect(again.text).toBe("summary");
    expect(again.calls).toEqual([]);

    const { root, child } = await runsOf(store);
    expect(root.filter((event) => event.type === "tool.requested")).toHaveLength(1);
    expect(payload(root.find((event) => event.type === "tool.completed"))?.result).toBe("and of a");
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });

  it("killed once the tool's outcome is committed: its child run, left open, is closed on resume", async () => {
    const store = await crashInside("research, once its outcome is committed");
    const before = await runsOf(store);
    // The outcome first: the child run is still open at the crash.
    expect(types(before.child)).toEqual(["run.started", "model.requested", "model.completed"]);
    expect(before.root.at(-1)?.type).toBe("tool.completed");

    const resumed = await resumeResearch(store);
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);
    const { child } = await runsOf(store);
    expect(child.at(-1)?.type).toBe("run.completed");
    expect(child.filter((event) => event.type.startsWith("run."))).toHaveLength(2);
  });

  it("a store error while closing that child run stops the run: it is never the tool's result", async () => {
    const store = await crashInside("research, once its outcome is committed");
    const append = store.append.bind(store);
    // Once, when the resumed call answered from the ledger closes its child run left open.
    let failed = false;
    store.append = async (request) => {
      if (!failed && request.events.some((event) => event.type === "run.completed")) {
        failed = true;
        throw new Error("connection reset");
      }
      return append(request);
    };
    await expect(resumeResearch(store)).rejects.toThrow("connection reset");
    // Handed to the model, the error would have been recorded as research's result in the
    // agent's next request, against the recorded tool.completed: nothing new is recorded.
    const requests = (await readWholeSession(store, RESEARCH.sessionId)).filter(
      (event) =>
        event.type === "model.requested" &&
        JSON.stringify(event.payload).includes("connection reset"),
    );
    expect(requests).toEqual([]);
    const resumed = await resumeResearch(store);
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
  });
});

describe("an inner stream the tool left open", () => {
  it("is recorded as failed, with what it streamed, before the child run closes", async () => {
    const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
    const mock = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) =>
        prompt.at(-1)?.role === "tool"
          ? textResult("done")
          : toolCallsResult(toolCall("c1", "pick", {})),
      doStream: async () => ({
        stream: partsStream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: '{"v":"a' },
          { type: "text-delta", id: "0", delta: 'b"}' },
          { type: "text-end", id: "0" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ] as never),
      }),
    });
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const model = wrapLanguageModel({ model: mock, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      {
        pick: tool({
          inputSchema: z.object({}),
          execute: async () => {
            const result = streamObject({
              model,
              schema: z.object({ v: z.string() }),
              prompt: "choose",
            });
            for await (const partial of result.partialObjectStream) return partial;
            return undefined;
          },
        }),
      },
      { recorder },
    );
    const { text } = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
    expect(text).toBe("done");

    const { root, child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "run.completed",
    ]);
    const failed = payload(child[2]);
    expect(failed.error.message).toBe("the tool returned before reading the stream to its end");
    expect(JSON.stringify(failed.partial)).toContain('{\\"v\\":\\"a');
    expect(root.find((event) => event.type === "tool.completed")).toBeDefined();
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });
});

describe("a sibling's refusal", () => {
  it("is never recorded as the outcome of a tool that ran beside it", async () => {
    const store = new MemoryEventStore();
    const address = { sessionId: "s1", runId: "r1" };
    const seen: string[] = [];
    const mock = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        const first = prompt[0]?.content[0];
        if (typeof first === "object" && first.type === "text" && first.text === "summarise")
          return textResult("summary");
        const last = prompt.at(-1);
        if (last?.role === "tool") {
          seen.push(JSON.stringify(last.content));
          return textResult("done");
        }
        return toolCallsResult(toolCall("c1", "research", {}), toolCall("c2", "lookup", {}));
      },
    });
    const never = new Promise<never>(() => {});
    const agent = (recorder: SessionRecorder, live: boolean) => {
      const model = wrapLanguageModel({ model: mock, middleware: ledgerMiddleware({ recorder }) });
      const tools = wrapTools(
        {
          research: tool({
            inputSchema: z.object({}),
            execute: async () => {
              if (live) await never; // the process dies before research's inner call
              await new Promise((resolve) => setTimeout(resolve, 20));
              return (await generateText({ model, prompt: "summarise" })).text;
            },
          }),
          lookup: tool({
            inputSchema: z.object({}),
            execute: async () => (live ? never : "found"),
          }),
        },
        { recorder, idempotent: ["research"] },
      );
      return generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
    };
    // The first process stops with both tool calls in flight (its promises never settle).
    void agent(new SessionRecorder({ store, actor, ...address }), true);
    await expect
      .poll(
        async () =>
          (await readWholeSession(store, "s1")).filter((e) => e.type === "tool.requested").length,
      )
      .toBe(2);

    // Resumed: lookup (not idempotent) is refused; research runs again beside it.
    const resumed = await SessionRecorder.resume({ store, actor, ...address });
    await expect(agent(resumed, false)).rejects.toMatchObject({ code: "unresolved-attempt" });
    const failed = (await readWholeSession(store, "s1")).filter((e) => e.type === "tool.failed");
    expect(failed).toEqual([]);

    // A person abandons lookup; research is made again, and its own answer reaches the model.
    const lookup = (await inspectSession(store, "s1")).unresolved.find((a) => a.name === "lookup");
    if (lookup === undefined) throw new Error("lookup is unresolved");
    const person = await SessionRecorder.resume({ store, actor, ...address });
    await person.abandon(lookup, "it did not happen");
    await expect(
      agent(await SessionRecorder.resume({ store, actor, ...address }), false),
    ).resolves.toMatchObject({ text: "done" });
    expect(seen.at(-1)).toContain('"value":"summary"');
  });
});
