import { join } from "node:path";
import {
  type AppendRequest,
  type EventStore,
  inspectSession,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { APICallError } from "@ai-sdk/provider";
import { generateText, type ModelMessage, stepCountIs, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation } from "./restore-messages.js";
import {
  APPROVING_CHAT,
  ASK as ASK_REFUND,
  denied,
  type RefundWorld,
  refundTools,
  refundTurn,
} from "./testing/approving-chat.test.data.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  ASK,
  SESSION,
  type Shop,
  shopModel,
  shopTools,
  toolResultsOf,
  turn,
} from "./testing/refund-shop.test.data.js";
import { assistant as actor } from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// A person denied a tool call at its approval request. The SDK runs nothing and gives the model
// `execution-denied` in the next turn (a run of its own): the ledger records the denial there,
// so a restore of the turn that asked gives that as the call's result, and offers no approval
// for it again.

const scratch = scratchDirectory("ai-sdk-denied-approval-restore-", { beforeAll, afterAll });

/** Refund 42's result as the SDK gave the model after the person denied it. */
const deniedRefund42 = (reason?: string) => ({
  type: "tool-result",
  toolCallId: "call_0",
  toolName: "refund",
  output: { type: "execution-denied", ...(reason !== undefined ? { reason } : {}) },
});

/** Turn 1 of the refund shop, stopped at refund 42's approval; its approval id as restored. */
async function askedTurn(path: string, shop: Shop) {
  await turn(path, shop, "turn-1", [ASK]);
  const store = new SqliteEventStore({ path });
  await store.init();
  const address = { sessionId: SESSION, runId: "turn-1", tools: shopTools(shop) };
  const asked = await restoreConversation(store, address);
  const approvalId = String(asked.pendingToolCalls[0]?.approvalId);
  return { store, address, asked, approvalId };
}

/** The tool attempts `runId` of the session holds, as inspection shows them. */
async function toolAttempts(store: EventStore, sessionId: string, runId: string) {
  const inspection = await inspectSession(store, sessionId);
  expect(inspection.unresolved).toEqual([]);
  const run = inspection.runs.find((view) => view.runId === runId);
  return (run?.steps ?? [])
    .flatMap((step) => step.attempts)
    .filter((attempt) => attempt.kind === "tool");
}

/** Turn 1's assistant message as the client kept it: the refund, and its approval request. */
const askedRefund: ModelMessage[] = [
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "call-refund", toolName: "refund", input: { order: "42" } },
      { type: "tool-approval-request", approvalId: "approval-1", toolCallId: "call-refund" },
    ],
  },
];

/** The refund's result as the SDK gave the model once the person denied it. */
const REFUND_DENIED = {
  type: "tool-result",
  toolCallId: "call-refund",
  toolName: "refund",
  output: { type: "execution-denied" },
};

/**
 * `store` as a process that wrote a denial's request alone and died sees it: the append that
 * holds an `attempt.abandoned` writes the events before it, and from then on nothing is written.
 */
function diesAfterRequest(store: EventStore): EventStore {
  let dead = false;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key !== "append") {
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return async (request: AppendRequest) => {
        if (dead) throw new Error("the process is gone");
        const cut = request.events.findIndex((event) => event.type === "attempt.abandoned");
        if (cut < 0) return target.append(request);
        dead = true;
        await target.append({ ...request, events: request.events.slice(0, cut) });
        throw new Error("the process died between the denial's request and its abandonment");
      };
    },
  });
}

describe("restoreConversation: a call a person denied at its approval request", () => {
  it("generateText: the turn that asked gives the denial as the call's result, offers no approval, and the chat goes on from it", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "generate.db");
    const shop: Shop = { refunds: [], prompts: [] };
    const { store, address, asked, approvalId } = await askedTurn(path, shop);
    onTestFinished(() => store.close());
    const denial = { type: "tool-approval-response" as const, approvalId, approved: false };
    const second = await turn(path, shop, "turn-2", [
      ...asked.messages,
      { role: "tool", content: [{ ...denial, reason: "over the limit" }] },
    ]);
    expect(second.result.text).toBe("done");
    expect(shop.refunds).toEqual(["7"]);
    expect(toolResultsOf(shop.prompts.at(-1)).call_0).toEqual(
      deniedRefund42("over the limit").output,
    );
    // The denial is recorded in the turn that took the answer, before its model call.
    expect(second.events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
      "model.requested",
      "model.completed",
    ]);
    expect(await toolAttempts(store, SESSION, "turn-2")).toMatchObject([
      {
        name: "refund",
        toolCallId: "call_0",
        status: "abandoned",
        request: { args: { order: "42", amount: 50, reason: "customer asked" } },
        outcome: "denied at its approval request: over the limit",
      },
    ]);

    // A chat server restores the turn that asked (the older turn): decided, not asked again.
    const restored = await restoreConversation(store, address);
    expect(restored.pendingToolCalls).toEqual([]);
    // The assistant message asks for the call, and no longer for its approval.
    const { content } = asked.messages.at(-2) as { content: { type: string }[] };
    expect(restored.messages.at(-2)).toEqual({
      role: "assistant",
      content: content.filter((part) => part.type !== "tool-approval-request"),
    });
    expect(restored.messages.at(-1)).toEqual({
      role: "tool",
      content: [
        deniedRefund42("over the limit"),
        ...((asked.messages.at(-1)?.content ?? []) as []),
      ],
    });
    // Without the tools, the same.
    const untold = await restoreConversation(store, { sessionId: SESSION, runId: "turn-1" });
    expect(untold.pendingToolCalls).toEqual([]);

    // The chat goes on from it: the SDK takes the messages, and the model is told of the denial
    // (the SDK refuses a tool call without a result, AI_MissingToolResultsError).
    const third = await turn(path, shop, "turn-3", restored.messages);
    expect(third.result.text).toBe("done");
    expect(shop.refunds).toEqual(["7"]);
    expect(toolResultsOf(shop.prompts.at(-1)).call_0).toEqual(
      deniedRefund42("over the limit").output,
    );
  });

  it("streamText: a denial without a reason is the call's result in the turn that asked; a resumed turn records it once", async ({
    onTestFinished,
  }) => {
    const store = new SqliteEventStore({ path: join(scratch, "stream.db") });
    await store.init();
    onTestFinished(() => store.close());
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const first = await refundTurn(store, world, "1", [ASK_REFUND]);
    await first.recorder.completeRun({ approval: "asked" });
    // The app kept the SDK's messages, with the SDK's own approval id.
    const second = await refundTurn(store, world, "2", denied(first.messages));
    expect(second.text).toEqual({ value: "order 42 is refunded" });
    expect(world).toMatchObject({ refunds: 0, modelCalls: 2 });
    const address = { sessionId: APPROVING_CHAT, runId: "turn-2" };
    const recorded = await readWholeRun(store, address);

    const restored = await restoreConversation(store, {
      sessionId: APPROVING_CHAT,
      runId: "turn-1",
      tools: refundTools(world),
    });
    expect(restored.pendingToolCalls).toEqual([]);
    expect(restored.messages.at(-1)).toEqual({ role: "tool", content: [REFUND_DENIED] });
    expect(await toolAttempts(store, APPROVING_CHAT, "turn-2")).toMatchObject([
      {
        name: "refund",
        toolCallId: "call-refund",
        status: "abandoned",
        outcome: "denied at its approval request (no reason given)",
      },
    ]);

    // The same request again (the client never got the answer): the turn is re-executed on the
    // resumed run, answered from the ledger, and the denial is not recorded twice.
    const again = await refundTurn(store, world, "2", denied(first.messages));
    expect(again.text).toEqual({ value: "order 42 is refunded" });
    expect(world).toMatchObject({ refunds: 0, modelCalls: 2 });
    expect(await readWholeRun(store, address)).toEqual(recorded);
    await again.recorder.completeRun({ text: "order 42 is refunded" });
  });

  it("the SDK's retry of the turn's first model call records the denial once, and a model call that fails leaves it recorded", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "retried.db");
    const shop: Shop = { refunds: [], prompts: [] };
    const { store, address, asked, approvalId } = await askedTurn(path, shop);
    onTestFinished(() => store.close());
    const messages: ModelMessage[] = [
      ...asked.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: false }] },
    ];
    // The provider is overloaded on the first call and answers the SDK's retry; then it is down.
    let calls = 0;
    const answers = shopModel(shop);
    const model = async (runId: string, fails: (call: number) => boolean) => {
      const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
      const flaky = new MockLanguageModelV3({
        doGenerate: async (options) => {
          if (fails(++calls))
            throw new APICallError({
              message: "Overloaded",
              url: "https://example.invalid",
              requestBodyValues: {},
              isRetryable: true,
            });
          return answers.doGenerate(options);
        },
      });
      return await generateText({
        model: wrapLanguageModel({ model: flaky, middleware: ledgerMiddleware({ recorder }) }),
        messages,
        tools: wrapTools(shopTools(shop), { recorder }),
        stopWhen: stepCountIs(3),
        maxRetries: 1,
      }).catch((error: unknown) => error);
    };
    const retried = await model("turn-2", (call) => call === 1);
    expect(retried).toMatchObject({ text: "done" });
    const turn2 = await readWholeRun(store, { sessionId: SESSION, runId: "turn-2" });
    expect(turn2.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);

    const down = await model("turn-3", () => true);
    expect(String(down)).toContain("Overloaded");
    expect((await toolAttempts(store, SESSION, "turn-3")).map((call) => call.status)).toEqual([
      "abandoned",
    ]);
    expect((await restoreConversation(store, address)).pendingToolCalls).toEqual([]);
  });

  it("a SIGKILL right after the denial's append: nothing in flight, the restore gives the denial, and the turn sent again records it once", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "crash.db");
    await crashInChild("chat right after its denial's append", path);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const turn1 = { sessionId: APPROVING_CHAT, runId: "turn-1", tools: refundTools(world) };
    // The request and its abandonment are one append: the call that never ran is not in flight.
    expect(await toolAttempts(store, APPROVING_CHAT, "turn-2")).toMatchObject([
      { toolCallId: "call-refund", status: "abandoned" },
    ]);
    const denial = [REFUND_DENIED];
    const atCrash = await restoreConversation(store, turn1);
    expect(atCrash.pendingToolCalls).toEqual([]);
    expect(atCrash.messages.at(-1)?.content).toEqual(denial);

    // The client sends the turn again, with the messages it kept.
    const again = await refundTurn(store, world, "2", denied(askedRefund));
    expect(again.text).toEqual({ value: "order 42 is refunded" });
    await again.recorder.completeRun({ text: "order 42 is refunded" });
    expect(world).toMatchObject({ refunds: 0, modelCalls: 1 });
    expect(await toolAttempts(store, APPROVING_CHAT, "turn-2")).toMatchObject([
      { toolCallId: "call-refund", status: "abandoned" },
    ]);
    expect((await restoreConversation(store, turn1)).messages.at(-1)?.content).toEqual(denial);
  });

  it("a denial an earlier version left half written (its request, not its abandonment): in flight until the turn is sent again, which abandons it, the call never having run", async ({
    onTestFinished,
  }) => {
    // Versions before declineToolCall wrote a denial in two appends; a process that died between
    // them left the request alone. Written here as such a process would have: its store takes
    // the request of the denial's append, and then the process is gone.
    const store = new SqliteEventStore({ path: join(scratch, "half-written.db") });
    await store.init();
    onTestFinished(() => store.close());
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const first = await refundTurn(store, world, "1", [ASK_REFUND]);
    await first.recorder.completeRun({ approval: "asked" });
    const dying = await refundTurn(diesAfterRequest(store), world, "2", denied(first.messages));
    expect(dying.text).toHaveProperty("error");
    const turn1 = { sessionId: APPROVING_CHAT, runId: "turn-1", tools: refundTools(world) };
    const [cut] = (await inspectSession(store, APPROVING_CHAT)).unresolved;
    expect(cut).toMatchObject({ runId: "turn-2", kind: "tool", toolCallId: "call-refund" });
    expect((await restoreConversation(store, turn1)).pendingToolCalls).toEqual([
      { toolCallId: "call-refund", toolName: "refund", input: { order: "42" }, requested: true },
    ]);

    // The client sends the turn again, with the messages it kept (the SDK's approval id is
    // none of the ledger's business: the prompt the model gets holds no approval part).
    const again = await refundTurn(store, world, "2", denied(askedRefund));
    expect(again.text).toEqual({ value: "order 42 is refunded" });
    await again.recorder.completeRun({ text: "order 42 is refunded" });
    expect(world).toMatchObject({ refunds: 0, modelCalls: 2 });
    expect(await toolAttempts(store, APPROVING_CHAT, "turn-2")).toMatchObject([
      { toolCallId: "call-refund", status: "abandoned" },
    ]);
    const restored = await restoreConversation(store, turn1);
    expect(restored.pendingToolCalls).toEqual([]);
    expect(restored.messages.at(-1)?.content).toEqual([REFUND_DENIED]);
  });

  it("a SIGKILL inside an approved call answered beside a denial: the denial is recorded before the approved call runs, and is not offered again", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "approved-beside-denied.db");
    const child = await crashInChild(
      "refund shop inside the approved refund, the other refund denied in the same message",
      path,
    );
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const turn2 = await readWholeRun(store, { sessionId: SESSION, runId: "turn-2" });
    expect(turn2.map((event) => [event.type, (event.payload as { name?: string }).name])).toEqual([
      ["run.started", undefined],
      ["tool.requested", "refund"],
      ["attempt.abandoned", undefined],
      ["tool.requested", "refund"],
    ]);
    expect(turn2[1]?.payload).toMatchObject({ toolCallId: "call_1", args: { order: "9" } });
    expect(turn2[3]?.payload).toMatchObject({ toolCallId: "call_0", args: { order: "42" } });
    const unresolved = (await inspectSession(store, SESSION)).unresolved;
    expect(unresolved).toMatchObject([{ runId: "turn-2", toolCallId: "call_0" }]);

    // The turn that asked: refund 42 started (a person must check it), refund 9 denied.
    const tools = shopTools({ refunds: [], prompts: [] });
    for (const runId of ["turn-1", "turn-2"]) {
      const restored = await restoreConversation(store, { sessionId: SESSION, runId, tools });
      expect(restored.pendingToolCalls).toEqual([
        {
          toolCallId: "call_0",
          toolName: "refund",
          input: { order: "42", amount: 50, reason: "customer asked" },
          requested: true,
        },
      ]);
      const assistant = restored.messages.at(-2) as { content: { type: string }[] };
      expect(assistant.content.map((part) => part.type)).toEqual(["tool-call", "tool-call"]);
      expect(restored.messages.at(-1)).toEqual({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "refund",
            output: { type: "execution-denied", reason: "too late" },
          },
        ],
      });
    }
  });
});
