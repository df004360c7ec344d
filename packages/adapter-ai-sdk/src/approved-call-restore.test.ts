import { join } from "node:path";
import { type EventStore, inspectSession, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { ModelMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreConversation } from "./restore-messages.js";
import {
  APPROVING_CHAT,
  ASK as ASK_REFUND,
  type RefundWorld,
  refundTools,
  refundTurn,
} from "./testing/approving-chat.test.data.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  ASK,
  SESSION,
  type Shop,
  shopTools,
  shopTurn,
  toolResultsOf,
  turn,
} from "./testing/refund-shop.test.data.js";
import {
  assistant as actor,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";

// A chat stopped at a tool approval; the person approved; the next turn (a run of its own) ran
// the approved call before its first model call, and the process died inside it. The call may
// have had its effect: no restore may offer it for approval again. And the outcome the next
// turn records for an approved call is that call's result in the turn that asked.

const scratch = scratchDirectory("ai-sdk-approved-call-restore-", { beforeAll, afterAll });

/** `store`, counting the session and run reads it serves. */
function countingReads(store: EventStore) {
  const reads = { readSession: 0, readRun: 0 };
  const counted = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (key === "readSession" || key === "readRun") reads[key]++;
        return value.apply(target, args);
      };
    },
  });
  return { store: counted, reads };
}

describe("restoreConversation: an approved call cut off by a crash in the next turn", () => {
  it("generateText: the turn that asked gives the call as in flight, not as an approval request; the turn cut off gives the same conversation", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "generate.db");
    const child = await crashInChild(
      "refund shop inside the refund approved on the restored turn",
      path,
    );
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const [cut] = (await inspectSession(store, SESSION)).unresolved;
    expect(cut).toMatchObject({ runId: "turn-2", kind: "tool", name: "refund" });

    const shop: Shop = { refunds: [], prompts: [] };
    const tools = shopTools(shop);
    const asked = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1", tools });
    const input = { order: "42", amount: 50, reason: "customer asked" };
    expect(asked.pendingToolCalls).toEqual([
      { toolCallId: "call_0", toolName: "refund", input, requested: true },
    ]);
    expect(asked.messages).toEqual([
      { role: "user", content: [{ type: "text", text: ASK.content }] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "call_0", toolName: "refund", input },
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "refund",
            input: { order: "7", amount: 5, reason: "customer asked" },
          },
          { type: "tool-call", toolCallId: "call_2", toolName: "lookup", input: { order: "42" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "refund",
            output: { type: "text", value: "refunded 7 (customer asked)" },
          },
          {
            type: "tool-result",
            toolCallId: "call_2",
            toolName: "lookup",
            output: { type: "text", value: "order 42: shipped" },
          },
        ],
      },
    ]);
    // The latest turn made no model call: it began from the turn that asked.
    const latest = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2", tools });
    expect(latest).toEqual(asked);
    // Without the tools, the same: the call started, whatever its tool says about approval.
    const untold = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2" });
    expect(untold.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "42", amount: 50 },
        requested: true,
      },
    ]);
    await store.close();

    // A person finds refund 42 made; the chat goes on in a turn of its own with that result,
    // and nothing is refunded again.
    const third = await turn(path, shop, "turn-3", [
      ...asked.messages,
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_0",
            toolName: "refund",
            output: { type: "text", value: "refund 42 found made" },
          },
        ],
      },
    ]);
    expect(third.result.text).toBe("done");
    expect(shop.refunds).toEqual([]);
    expect(toolResultsOf(shop.prompts.at(-1)).call_0).toEqual({
      type: "text",
      value: "refund 42 found made",
    });
  });

  it("streamText: in flight after the SIGKILL, then the outcome a person records in the turn cut off is the call's result", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "stream.db");
    const child = await crashInChild("chat inside the refund its user approved", path);
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const tools = refundTools(world);
    const turn1 = { sessionId: APPROVING_CHAT, runId: "turn-1", tools };
    const turn2 = { ...turn1, runId: "turn-2" };
    const asking: ModelMessage[] = [
      { role: "user", content: [{ type: "text", text: String(ASK_REFUND.content) }] },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "call-refund",
            toolName: "refund",
            input: { order: "42" },
          },
        ],
      },
    ];
    const inFlight = {
      messages: asking,
      pendingToolCalls: [
        { toolCallId: "call-refund", toolName: "refund", input: { order: "42" }, requested: true },
      ],
    };
    expect(await restoreConversation(store, turn1)).toEqual(inFlight);
    expect(await restoreConversation(store, turn2)).toEqual(inFlight);

    // A person finds the refund made and abandons the call on the turn it was cut off in.
    const [cut] = (await inspectSession(store, APPROVING_CHAT)).unresolved;
    if (cut === undefined) throw new Error("no call in flight");
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: APPROVING_CHAT,
      runId: "turn-2",
      actor,
    });
    await recorder.abandon(cut, "refund 42 made");
    const decided = {
      messages: [
        ...asking,
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call-refund",
              toolName: "refund",
              output: { type: "error-text", value: "abandoned: refund 42 made" },
            },
          ],
        },
      ] satisfies ModelMessage[],
      pendingToolCalls: [],
    };
    expect(await restoreConversation(store, turn1)).toEqual(decided);
    expect(await restoreConversation(store, turn2)).toEqual(decided);

    // The chat goes on from it in a turn of its own: the model is called, nothing refunded.
    const next = await refundTurn(store, world, "3", decided.messages);
    expect(next.text).toEqual({ value: "order 42 is refunded" });
    expect(world).toMatchObject({ refunds: 0, modelCalls: 1 });
  });

  it("an approved call's outcome recorded in the next turn is its result in the turn that asked, read from its blob", async ({
    onTestFinished,
  }) => {
    const store = new SqliteEventStore({ path: join(scratch, "outcome.db") });
    await store.init();
    onTestFinished(() => store.close());
    const shop: Shop = { refunds: [], prompts: [] };
    // A reason long enough that the refund's result goes to a blob.
    const reason = `damaged: ${"the box was crushed. ".repeat(250)}`;
    const refund42 = toolCall("call_0", "refund", { order: "42", amount: 50, reason });
    await shopTurn(store, shop, "turn-1", [ASK], () => toolCallsResult(refund42));
    const address = { sessionId: SESSION, runId: "turn-1", tools: shopTools(shop) };
    const asked = await restoreConversation(store, address);
    const approvalId = String(asked.pendingToolCalls[0]?.approvalId);
    // Approved: turn 2 makes the refund, then its model call fails (the provider is down).
    const failed = await shopTurn(
      store,
      shop,
      "turn-2",
      [
        ...asked.messages,
        { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] },
      ],
      () => {
        throw new Error("provider down");
      },
    ).catch((error: unknown) => error);
    expect(String(failed)).toContain("provider down");
    expect(shop.refunds).toEqual(["42"]);
    const stored = await readWholeRun(store, { sessionId: SESSION, runId: "turn-2" });
    expect(
      JSON.stringify(stored.find((event) => event.type === "tool.completed")?.payload),
    ).toContain('"$ledger"');

    const restored = await restoreConversation(store, address);
    expect(restored.pendingToolCalls).toEqual([]);
    expect(restored.messages.at(-1)).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_0",
          toolName: "refund",
          output: { type: "text", value: `refunded 42 (${reason})` },
        },
      ],
    });
  });

  it("the turn cut off inside its approved call restores the turn that asked when that turn's completion is in a blob", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "blob-completion.db");
    const child = await crashInChild(
      "refund shop inside the approved refund, its completion in a blob",
      path,
    );
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const stored = await readWholeRun(store, { sessionId: SESSION, runId: "turn-1" });
    const completion = stored.find((event) => event.type === "model.completed")?.payload;
    expect(JSON.stringify(completion)).toMatch(/"content":\{"\$ledger":"json"/);

    const tools = shopTools({ refunds: [], prompts: [] });
    const asked = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1", tools });
    expect(asked.pendingToolCalls).toEqual([
      {
        toolCallId: "call_0",
        toolName: "refund",
        input: { order: "42", amount: 50, reason: "customer asked" },
        requested: true,
      },
    ]);
    expect(asked.messages.at(-1)?.content).toHaveLength(12);
    const latest = await restoreConversation(store, { sessionId: SESSION, runId: "turn-2", tools });
    expect(latest).toEqual(asked);
  });

  it("the turn cut off restores the turn that asked reading the session once, and neither run twice", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "reads.db");
    await crashInChild("refund shop inside the refund approved on the restored turn", path);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const tools = shopTools({ refunds: [], prompts: [] });
    const asked = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1", tools });
    const counting = countingReads(store);
    const latest = await restoreConversation(counting.store, {
      sessionId: SESSION,
      runId: "turn-2",
      tools,
    });
    expect(latest).toEqual(asked);
    // Each read here is one page: turn 2's run, then the session, which holds turn 1's events.
    expect(counting.reads).toEqual({ readRun: 1, readSession: 1 });
  });
});
