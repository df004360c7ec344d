import {
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import {
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistantRecorder,
  partsStream,
  payload,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// A sub-agent run inside a wrapped tool (`desk`) records on that tool call's child run. What
// `wrapTools` was told about the sub-agent's own tools, wrapped for the same recorder, holds
// there as on the agent's run: a denial of one of their calls says the effect declared for the
// tool, and a stream keeps the input parts of a tool with an input callback.

const SESSION = { sessionId: "desk", runId: "agent" };

/** The sub-agent's conversation: a refund of order 9 it asked for, which a person denied. */
const DENIED_REFUND: ModelMessage[] = [
  { role: "user", content: "refund order 9" },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "r1", toolName: "refund", input: { order: "9" } },
      { type: "tool-approval-request", approvalId: "a1", toolCallId: "r1" },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "a1", approved: false, reason: "too late" },
    ],
  },
];

/**
 * The agent (generateText on `provider`) asks for `desk` once, whose execute runs `subAgent`
 * with the same recorder and wrapped model; then it says "done". Returns the child run's events.
 */
async function runDesk(
  provider: LanguageModelV3,
  subAgent: (agent: { recorder: SessionRecorder; model: LanguageModelV3 }) => Promise<string>,
) {
  const store = new MemoryEventStore();
  const { recorder } = assistantRecorder(store, SESSION);
  const model = wrapLanguageModel({ model: provider, middleware: ledgerMiddleware({ recorder }) });
  const tools = wrapTools(
    { desk: tool({ inputSchema: z.object({}), execute: () => subAgent({ recorder, model }) }) },
    { recorder },
  );
  const result = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
  expect(result.text).toBe("done");
  const events = await readWholeSession(store, SESSION.sessionId);
  const onChild = (event: LedgerEvent) => event.runId !== SESSION.runId;
  return events.filter(onChild);
}

/**
 * Generates the agent's answers (desk, then "done"); streams the sub-agent's: a lookup call
 * whose input comes as tool input parts, then "found".
 */
function lookupModel() {
  const { model: agent } = scriptedModel([
    toolCallsResult(toolCall("d1", "desk", {})),
    textResult("done"),
  ]);
  const { model: found } = scriptedModel([textResult("found")]);
  const input = JSON.stringify({ q: "order 9" });
  const lookupParts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "tool-input-start", id: "l1", toolName: "lookup" },
    { type: "tool-input-delta", id: "l1", delta: input },
    { type: "tool-input-end", id: "l1" },
    { type: "tool-call", toolCallId: "l1", toolName: "lookup", input },
    {
      type: "finish",
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: toolCallsResult().usage,
    },
  ];
  let streams = 0;
  return new MockLanguageModelV3({
    provider: "scripted",
    modelId: "scripted-1",
    doGenerate: (options) => agent.doGenerate(options),
    doStream: async (options) =>
      ++streams === 1 ? { stream: partsStream(lookupParts) } : found.doStream(options),
  });
}

describe("a sub-agent run inside a wrapped tool", () => {
  it("records a denial of its tool's call with the effect wrapTools declares for the tool", async () => {
    const { model: provider } = scriptedModel([
      toolCallsResult(toolCall("d1", "desk", {})),
      textResult("refund 9 denied"),
      textResult("done"),
    ]);
    const events = await runDesk(provider, async ({ recorder, model }) => {
      const tools = wrapTools(
        {
          refund: tool({
            inputSchema: z.object({ order: z.string() }),
            needsApproval: true,
            execute: async ({ order }) => `refunded ${order}`,
          }),
        },
        { recorder, effects: { refund: "write" }, idempotent: ["refund"] },
      );
      return (await generateText({ model, tools, messages: DENIED_REFUND })).text;
    });
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect(payload(events[1])).toMatchObject({
      toolCallId: "r1",
      name: "refund",
      effect: { kind: "write", idempotent: true },
    });
    expect(payload(events[2]).reason).toBe("denied at its approval request: too late");
  });

  it("keeps the streamed input parts of its tool that has an input callback", async () => {
    const deltas: unknown[] = [];
    const events = await runDesk(lookupModel(), async ({ recorder, model }) => {
      const tools = wrapTools(
        {
          lookup: tool({
            inputSchema: z.object({ q: z.string() }),
            onInputDelta: ({ inputTextDelta }) => {
              deltas.push(inputTextDelta);
            },
            execute: async ({ q }) => `found ${q}`,
          }),
        },
        { recorder },
      );
      const streamed = streamText({ model, tools, prompt: "look up", stopWhen: stepCountIs(2) });
      return await streamed.text;
    });
    expect(deltas).toEqual(['{"q":"order 9"}']);
    const completion = events.find((event) => event.type === "model.completed");
    expect(payload(completion)?.response.toolInputs).toEqual([
      { at: 0, type: "tool-input-start", id: "l1", toolName: "lookup" },
      { at: 0, type: "tool-input-delta", id: "l1", deltas: ['{"q":"order 9"}'] },
      { at: 0, type: "tool-input-end", id: "l1" },
    ]);
  });
});
