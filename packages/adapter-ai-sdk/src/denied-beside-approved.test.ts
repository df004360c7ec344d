import {
  type LedgerEvent,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3Content } from "@ai-sdk/provider";
import {
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  type ToolApprovalResponse,
  tool,
  wrapLanguageModel,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { type WrapToolsOptions, wrapTools } from "./wrap-tools.js";

// A person answers several approval requests in one message: some approved, some denied. The
// SDK runs the approved calls as the next turn begins, before its first model call, whose
// prompt then carries the denials. The denials are recorded before the approved calls run
// (a crash inside one must not lose them: denied-approval-restore.test.ts), once, and say the
// effect `wrapTools` declares for the tool, as its calls do.

const SESSION = "refunds";

/** Refunds of orders 42, 9 and 11, each over the limit: each waits for its approval. */
const ASKED = [
  toolCall("call_0", "refund", { order: "42", amount: 50 }),
  toolCall("call_1", "refund", { order: "9", amount: 60 }),
  toolCall("call_2", "refund", { order: "11", amount: 70 }),
];

/** One turn on its own run of `store`: the model asks for `asked`, then says "done". */
async function turn(
  store: MemoryEventStore,
  runId: string,
  messages: ModelMessage[],
  options: {
    asked?: LanguageModelV3Content[];
    wrap?: Omit<WrapToolsOptions, "recorder">;
    how?: "generate" | "stream";
  } = {},
) {
  const refunds: string[] = [];
  const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
  const script = options.asked ? [toolCallsResult(...options.asked)] : [textResult("done")];
  const { model } = scriptedModel(script);
  const tools = {
    refund: tool({
      inputSchema: z.object({ order: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: async ({ order }) => {
        // The approved calls run at once: each waits a little, so they overlap.
        await new Promise((resolve) => setTimeout(resolve, 10));
        refunds.push(order);
        return `refunded ${order}`;
      },
    }),
  };
  const call = {
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    messages,
    tools: wrapTools(tools, { recorder, ...options.wrap }),
    stopWhen: stepCountIs(2),
  };
  let result: { text: string; content: Awaited<ReturnType<typeof generateText>>["content"] };
  let responseMessages: ModelMessage[];
  if (options.how === "stream") {
    const streamed = streamText(call);
    result = { text: await streamed.text, content: await streamed.content };
    responseMessages = (await streamed.response).messages;
  } else {
    const generated = await generateText(call);
    result = generated;
    responseMessages = generated.response.messages;
  }
  const events = await readWholeRun(store, { sessionId: SESSION, runId });
  return { result, responseMessages, refunds, events };
}

/** Turn 1, stopped at the approvals of `asked`; the messages the app keeps, and the requests. */
async function askedTurn(store: MemoryEventStore, asked: LanguageModelV3Content[]) {
  const ask: ModelMessage = { role: "user", content: "refund the orders" };
  const { result, responseMessages } = await turn(store, "turn-1", [ask], { asked });
  const requests = result.content.flatMap((part) =>
    part.type === "tool-approval-request" ? [part] : [],
  );
  expect(requests).toHaveLength(asked.length);
  const messages = [ask, ...responseMessages];
  const answer = (answers: Record<string, boolean>): ModelMessage => ({
    role: "tool",
    content: requests.map(
      (request): ToolApprovalResponse => ({
        type: "tool-approval-response",
        approvalId: request.approvalId,
        approved: answers[request.toolCall.toolCallId] ?? false,
        ...(answers[request.toolCall.toolCallId] ? {} : { reason: "too late" }),
      }),
    ),
  });
  return { messages, answer };
}

const summary = (event: LedgerEvent) => {
  const payload = event.payload as { toolCallId?: string; reason?: string };
  return [event.type, payload.reason ?? payload.toolCallId ?? null];
};

describe("denials answered beside approved calls", () => {
  it.each(["generate", "stream"] as const)(
    "(%sText) are recorded once, before the approved calls the SDK runs at once, with the tool's declared effect",
    async (how) => {
      const store = new MemoryEventStore();
      const { messages, answer } = await askedTurn(store, ASKED);
      const wrap = { effects: { refund: "write" as const } };
      const second = await turn(
        store,
        "turn-2",
        [...messages, answer({ call_0: true, call_2: true })],
        { wrap, how },
      );
      expect(second.result.text).toBe("done");
      expect(second.refunds.sort()).toEqual(["11", "42"]);
      const [started, denied, abandoned, ...rest] = second.events;
      expect([started, denied, abandoned].map((event) => event && summary(event))).toEqual([
        ["run.started", null],
        ["tool.requested", "call_1"],
        ["attempt.abandoned", "denied at its approval request: too late"],
      ]);
      expect(denied?.payload).toMatchObject({
        name: "refund",
        args: { order: "9", amount: 60 },
        effect: { kind: "write", idempotent: false },
      });
      // Then the approved calls, run at once, and the model call: no second denial.
      expect(rest.map((event) => event.type)).toEqual([
        "tool.requested",
        "tool.requested",
        "tool.completed",
        "tool.completed",
        "model.requested",
        "model.completed",
      ]);
      expect(
        rest
          .filter((event) => event.type === "tool.requested")
          .map((event) => (event.payload as { toolCallId: string }).toolCallId)
          .sort(),
      ).toEqual(["call_0", "call_2"]);
    },
  );

  it("all denied: recorded before the first model call, with the tool's declared effect; a tool given without declarations has the default", async () => {
    const store = new MemoryEventStore();
    const { messages, answer } = await askedTurn(store, ASKED.slice(0, 1));
    const declared = await turn(store, "turn-2", [...messages, answer({})], {
      wrap: { effects: { refund: "write" }, idempotent: ["refund"] },
    });
    expect(declared.refunds).toEqual([]);
    expect(declared.events.map(summary)).toEqual([
      ["run.started", null],
      ["tool.requested", "call_0"],
      ["attempt.abandoned", "denied at its approval request: too late"],
      ["model.requested", null],
      ["model.completed", null],
    ]);
    expect(declared.events[1]?.payload).toMatchObject({
      effect: { kind: "write", idempotent: true },
    });
    const plain = await turn(store, "turn-3", [...messages, answer({})]);
    expect(plain.events[1]?.payload).toMatchObject({
      toolCallId: "call_0",
      effect: { kind: "unknown", idempotent: false },
    });
  });
});
