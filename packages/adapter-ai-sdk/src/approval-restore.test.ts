import { join } from "node:path";
import { inspectSession, LedgerError, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { approvalIdOf } from "./approval-requests.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation } from "./restore-messages.js";
import {
  APPROVING_CHAT,
  ASK as ASK_REFUND,
  type RefundWorld,
  refundTools,
  refundTurn,
} from "./testing/approving-chat.test.data.js";
import { crashableModel, crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  ASK,
  SESSION,
  type Shop,
  shopModel,
  shopTools,
  toolResultsOf,
  turn,
} from "./testing/refund-shop.test.data.js";
import {
  assistant as actor,
  payload,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-approval-restore-", { beforeAll, afterAll });
describe("restoreConversation: a chat paused at a tool approval, continued from the ledger alone", () => {
  it.each([
    ["approved", true],
    ["denied", false],
  ] as const)(
    "generateText, %s: the restored request is answered, and the turn goes on on a run of its own",
    async (_, approved) => {
      const path = join(scratch, `generate-${approved}.db`);
      // Turn 1: the SDK stops at refund 42's approval; refund 7 and lookup ran. The app keeps
      // none of the chat's messages, and leaves the run open (its process is gone).
      const shop: Shop = { refunds: [], prompts: [] };
      const first = await turn(path, shop, "turn-1", [ASK]);
      expect(first.result.finishReason).toBe("tool-calls");
      expect(shop.refunds).toEqual(["7"]);

      // A new process: the ledger alone, and the app's tools.
      const store = new SqliteEventStore({ path });
      await store.init();
      const address = { sessionId: SESSION, runId: "turn-1" };
      const restored = await restoreConversation(store, { ...address, tools: shopTools(shop) });
      const completion = first.events.find((event) => event.type === "model.completed");
      const approvalId = approvalIdOf(String(completion?.eventId), "call_0");
      expect(restored.pendingToolCalls).toEqual([
        {
          toolCallId: "call_0",
          toolName: "refund",
          input: { order: "42", amount: 50, reason: "customer asked" },
          requested: false,
          approvalId,
        },
      ]);
      // The SDK's own messages, but for the approvalId it made and the ledger never saw.
      const live = JSON.parse(JSON.stringify(first.result.response.messages));
      live[0].content.at(-1).approvalId = approvalId;
      expect(restored.messages).toEqual([
        { role: "user", content: [{ type: "text", text: ASK.content }] },
        ...live,
      ]);
      // Without the tools, the ledger cannot tell a call that waits for approval: no request to
      // answer, and the SDK refuses an answer to none.
      const untold = await restoreConversation(store, address);
      expect(untold.pendingToolCalls.map((call) => call.approvalId)).toEqual([undefined]);
      const answer = { type: "tool-approval-response" as const, approvalId, approved };
      await expect(
        generateText({
          model: shopModel(shop),
          messages: [...untold.messages, { role: "tool", content: [answer] }],
          tools: shopTools(shop),
        }),
      ).rejects.toMatchObject({ name: "AI_InvalidToolApprovalError" });
      // A restored request has no signature: a call given the SDK's secret refuses an approval.
      if (approved)
        await expect(
          generateText({
            model: shopModel(shop),
            messages: [...restored.messages, { role: "tool", content: [answer] }],
            tools: shopTools(shop),
            experimental_toolApprovalSecret: "server secret",
          }),
        ).rejects.toMatchObject({ name: "AI_InvalidToolApprovalSignatureError" });
      await store.close();

      // The person's decision, answered to the request restored; the next turn is a run of its
      // own (README: A chat app), which runs the approved refund before its first model call.
      const second = await turn(path, shop, "turn-2", [
        ...restored.messages,
        {
          role: "tool",
          content: [
            {
              type: "tool-approval-response",
              approvalId,
              approved,
              ...(approved ? {} : { reason: "over the limit" }),
            },
          ],
        },
      ]);
      expect(second.result.text).toBe("done");
      expect(shop.refunds).toEqual(approved ? ["7", "42"] : ["7"]);
      const results = toolResultsOf(shop.prompts.at(-1));
      expect(results.call_0).toEqual(
        approved
          ? { type: "text", value: "refunded 42 (customer asked)" }
          : { type: "execution-denied", reason: "over the limit" },
      );
      expect(results.call_1).toEqual({ type: "text", value: "refunded 7 (customer asked)" });
      expect(results.call_2).toEqual({ type: "text", value: "order 42: shipped" });
      // The approved refund is recorded on the new run, with the input the SDK parsed; the
      // denied one too, abandoned (see denied-approval-restore.test.ts).
      expect(second.events.map((event) => event.type)).toEqual([
        "run.started",
        "tool.requested",
        approved ? "tool.completed" : "attempt.abandoned",
        "model.requested",
        "model.completed",
      ]);
      expect(payload(second.events[1]).args).toEqual({
        order: "42",
        amount: 50,
        reason: "customer asked",
      });
    },
  );

  it.for([
    ["approved", true],
    ["denied", false],
  ] as const)(
    "streamText, %s: after the process died at the approval request (SIGKILL), the turn goes on from the ledger",
    async ([, approved], { onTestFinished }) => {
      const path = join(scratch, `stream-${approved}.db`);
      await crashInChild("chat paused at the refund's approval", path);
      const store = new SqliteEventStore({ path });
      await store.init();
      onTestFinished(() => store.close());
      const world: RefundWorld = { refunds: 0, modelCalls: 0, prompts: [] };
      const address = { sessionId: APPROVING_CHAT, runId: "turn-1" };
      // Nothing was in flight: the call waits for the person, it never started.
      expect((await inspectSession(store, APPROVING_CHAT)).unresolved).toEqual([]);
      const { messages, pendingToolCalls } = await restoreConversation(store, {
        ...address,
        tools: refundTools(world),
      });
      const [pending] = pendingToolCalls;
      expect(pendingToolCalls).toEqual([
        {
          toolCallId: "call-refund",
          toolName: "refund",
          input: { order: "42" },
          requested: false,
          approvalId: expect.stringMatching(/^ledger-approval-.+-call-refund$/),
        },
      ]);
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: ASK_REFUND.content }] },
        {
          role: "assistant",
          content: [
            {
              type: "tool-call",
              toolCallId: "call-refund",
              toolName: "refund",
              input: { order: "42" },
            },
            {
              type: "tool-approval-request",
              approvalId: pending?.approvalId,
              toolCallId: "call-refund",
            },
          ],
        },
      ]);

      const decision = {
        type: "tool-approval-response" as const,
        approvalId: String(pending?.approvalId),
        approved,
      };
      const second = await refundTurn(store, world, "2", [
        ...messages,
        { role: "tool", content: [decision] },
      ]);
      expect(second.text).toEqual({ value: "order 42 is refunded" });
      expect(second.errors).toEqual([]);
      await second.recorder.completeRun({ text: "order 42 is refunded" });
      expect(world).toMatchObject({ refunds: approved ? 1 : 0, modelCalls: 1 });
      expect(toolResultsOf(world.prompts?.[0])).toEqual({
        "call-refund": approved
          ? { type: "text", value: "refunded" }
          : { type: "execution-denied", reason: undefined },
      });
      const turn2 = await readWholeRun(store, { sessionId: APPROVING_CHAT, runId: "turn-2" });
      expect(turn2.map((event) => event.type)).toEqual([
        "run.started",
        "tool.requested",
        approved ? "tool.completed" : "attempt.abandoned",
        "model.requested",
        "model.completed",
        "run.completed",
      ]);
      // The turn that asked was left open by the crash, with nothing in flight: its resume closes it.
      const asked = await SessionRecorder.resume({ store, ...address, actor });
      await asked.completeRun({ approval: "asked" });
      expect((await store.runHead(address)).status).toBe("completed");
    },
  );

  it("tells a call waiting for approval from one the app answers itself, and takes both answers in one tool message", async () => {
    const path = join(scratch, "mixed.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const shop: Shop = { refunds: [], prompts: [] };
    const tools = {
      refund: shopTools(shop).refund,
      // A tool the client runs (no execute); asked about approval too, it needs none.
      confirm: tool({
        inputSchema: z.object({ question: z.string() }),
        needsApproval: async () => false,
      }),
    };
    const model = crashableModel((options) => {
      shop.prompts.push(options.prompt);
      return options.prompt.at(-1)?.role === "tool"
        ? textResult("done")
        : toolCallsResult(
            toolCall("call_0", "refund", { order: "42", amount: 50 }),
            toolCall("call_1", "confirm", { question: "refund 42?" }),
          );
    });
    const recorder = new SessionRecorder({ store, sessionId: SESSION, runId: "turn-1", actor });
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      messages: [ASK],
      tools: wrapTools(tools, { recorder }),
    });
    await recorder.completeRun();

    // The next turn's tools, wrapped as given to generateText: the wrapped needsApproval is asked.
    const turn2 = new SessionRecorder({ store, sessionId: SESSION, runId: "turn-2", actor });
    const wrapped = wrapTools(tools, { recorder: turn2 });
    const restored = await restoreConversation(store, {
      sessionId: SESSION,
      runId: "turn-1",
      tools: wrapped,
    });
    expect(
      restored.pendingToolCalls.map(({ toolName, requested, approvalId }) => ({
        toolName,
        requested,
        approvalId,
      })),
    ).toEqual([
      { toolName: "refund", requested: false, approvalId: expect.any(String) },
      { toolName: "confirm", requested: false, approvalId: undefined },
    ]);
    const [refund, confirm] = restored.pendingToolCalls;
    const result = await generateText({
      model: wrapLanguageModel({
        model,
        middleware: ledgerMiddleware({ recorder: turn2 }),
      }),
      messages: [
        ...restored.messages,
        {
          role: "tool",
          content: [
            {
              type: "tool-approval-response",
              approvalId: String(refund?.approvalId),
              approved: true,
            },
            {
              type: "tool-result",
              toolCallId: String(confirm?.toolCallId),
              toolName: "confirm",
              output: { type: "text", value: "yes" },
            },
          ],
        },
      ],
      tools: wrapped,
    });
    expect(result.text).toBe("done");
    expect(shop.refunds).toEqual(["42"]);
    expect(toolResultsOf(shop.prompts.at(-1))).toEqual({
      call_0: { type: "text", value: "refunded 42 (customer asked)" },
      call_1: { type: "text", value: "yes" },
    });
    await store.close();
  });

  it("goes on in a run of its own: on a resume of the turn that asked, the approved call runs, then the next model call is replay-divergence", async () => {
    const path = join(scratch, "resumed.db");
    const shop: Shop = { refunds: [], prompts: [] };
    await turn(path, shop, "turn-1", [ASK]);
    const store = new SqliteEventStore({ path });
    await store.init();
    try {
      const address = { store, sessionId: SESSION, runId: "turn-1", actor };
      const restored = await restoreConversation(store, {
        sessionId: SESSION,
        runId: "turn-1",
        tools: shopTools(shop),
      });
      const approvalId = String(restored.pendingToolCalls[0]?.approvalId);
      const recorder = await SessionRecorder.resume(address);
      const error = await generateText({
        model: wrapLanguageModel({
          model: shopModel(shop),
          middleware: ledgerMiddleware({ recorder }),
        }),
        messages: [
          ...restored.messages,
          {
            role: "tool",
            content: [{ type: "tool-approval-response", approvalId, approved: true }],
          },
        ],
        tools: wrapTools(shopTools(shop), { recorder }),
      }).catch((caught: unknown) => caught);
      expect(LedgerError.isInstance(error, "replay-divergence"), String(error)).toBe(true);
      expect(shop.refunds).toEqual(["7", "42"]);
    } finally {
      await store.close();
    }
  });
});
