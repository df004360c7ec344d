import { join } from "node:path";
import {
  inspectSession,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
  type UnresolvedAttemptError,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { convertToModelMessages, type UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { chatTurnId } from "./chat-turn-id.js";
import type { RefundWorld } from "./testing/approving-chat.test.data.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import { assistant as actor } from "./testing/scripted-model.test.data.js";
import {
  approvedAll,
  REFUND_42,
  UI_CHAT,
  uiChatRequest,
  uiChatRequestLeft,
} from "./testing/ui-chat.test.data.js";

// A useChat client answers an approval on the assistant message and posts the conversation
// again: that request answers the same user message as the one that asked, and must be a turn
// of its own (the run that asked is closed), yet the same turn when the client sends it again
// after the server died, even re-asked (the approval id is the SDK's, new on every replay).

const scratch = scratchDirectory("ai-sdk-chat-turn-id-", { beforeAll, afterAll });

const textOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

describe("chatTurnId: a run per request of a useChat client", () => {
  it("the request that carries the approval is a turn of its own: the refund is made once and the model answers", async () => {
    const store = new MemoryEventStore();
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const asked = await uiChatRequest(store, world, [REFUND_42]);
    expect(asked.chunks.map((chunk) => chunk.type)).toContain("tool-approval-request");
    const approving = await uiChatRequest(store, world, approvedAll(asked.messages));
    expect(approving.errors).toEqual([]);
    expect(world).toEqual({ refunds: 1, modelCalls: 2 });
    expect(textOf(approving.messages.at(-1))).toBe("order 42 is refunded");
    const runs = (await inspectSession(store, UI_CHAT)).runs;
    expect(runs.map((run) => run.status)).toEqual(["completed", "completed"]);

    // Sent again (the answer was lost): the same turn, answered from the ledger.
    const again = await uiChatRequest(store, world, approvedAll(asked.messages));
    expect(textOf(again.messages.at(-1))).toBe("order 42 is refunded");
    expect(world).toEqual({ refunds: 1, modelCalls: 2 });
    expect((await inspectSession(store, UI_CHAT)).runs).toHaveLength(2);
  });

  it("is the same for the conversation re-asked: the approval id the SDK made again is not part of it", async () => {
    const store = new MemoryEventStore();
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const asked = await uiChatRequest(store, world, [REFUND_42]);
    const reasked = await uiChatRequest(store, world, [REFUND_42]);
    const approvalIds = [asked, reasked].map(
      (request) =>
        request.chunks.find((chunk) => chunk.type === "tool-approval-request")?.approvalId,
    );
    expect(approvalIds[0]).not.toBe(approvalIds[1]);
    const ids = await Promise.all(
      [asked, reasked].map(async (request) =>
        chatTurnId(await convertToModelMessages(approvedAll(request.messages))),
      ),
    );
    expect(ids[0]).toBe(ids[1]);
    expect(ids[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(chatTurnId(await convertToModelMessages([REFUND_42]))).not.toBe(ids[0]);
  });

  it("the system prompt is the server's, not the request's: sent again after a deploy changed it, the turn is the same run, refused with replay-divergence, the refund not made again", async () => {
    const store = new MemoryEventStore();
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const before = { system: "You refund orders." };
    const asked = await uiChatRequest(store, world, [REFUND_42], before);
    const approving = await uiChatRequest(store, world, approvedAll(asked.messages), before);
    expect(approving.errors).toEqual([]);
    expect(world).toEqual({ refunds: 1, modelCalls: 2 });

    // The answer was lost; the client sends the request again to a server with a new prompt.
    const after = { system: "You refund orders under 100 EUR." };
    const again = await uiChatRequest(store, world, approvedAll(asked.messages), after);
    expect(again.recorder.runId).toBe(approving.recorder.runId);
    expect(world).toEqual({ refunds: 1, modelCalls: 2 });
    expect(again.errors).toEqual([
      expect.objectContaining({ code: "replay-divergence", name: "ReplayDivergenceError" }),
    ]);
    expect((await inspectSession(store, UI_CHAT)).runs).toHaveLength(2);
  });

  it("a client that goes away mid-answer: the server reads the turn to its end and closes its run", async () => {
    // Without consumeStream the SDK stopped with the response (onFinish never called): the run
    // stayed open for good, as if its process had died, unless the client sent it again.
    const store = new MemoryEventStore();
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const asked = await uiChatRequest(store, world, [REFUND_42]);
    const left = await uiChatRequestLeft(store, world, approvedAll(asked.messages), "text-delta");
    expect(left.chunks.filter((chunk) => chunk.type === "text-delta")).toHaveLength(1);
    await vi.waitFor(() => expect(left.recorder.status).toBe("completed"));
    expect(world).toEqual({ refunds: 1, modelCalls: 2 });
    expect((await inspectSession(store, UI_CHAT)).runs.map((run) => run.status)).toEqual([
      "completed",
      "completed",
    ]);
  });

  it("a SIGKILL inside the approved refund: the request sent again, or the turn regenerated and approved again, does not make it twice", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "approved-refund.db");
    const child = await crashInChild("useChat inside the refund its user approved", path);
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const [cut] = (await inspectSession(store, UI_CHAT)).unresolved;
    expect(cut).toMatchObject({ kind: "tool", name: "refund" });

    // The client regenerates: it drops the assistant message and posts the user's message; the
    // answer comes from the ledger, with an approval request of a new id; the user approves.
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const asked = await uiChatRequest(store, world, [REFUND_42]);
    const approving = await uiChatRequest(store, world, approvedAll(asked.messages));
    expect(world).toEqual({ refunds: 0, modelCalls: 0 });
    const refused = approving.errors.find((error) =>
      LedgerError.isInstance(error, "unresolved-attempt"),
    ) as UnresolvedAttemptError | undefined;
    expect(refused?.attempt.attemptId).toBe(cut?.attemptId);
    // The client is told why (the server's onError of toUIMessageStream), not "An error occurred.".
    const told = approving.chunks.find((chunk) => chunk.type === "error");
    expect(told).toMatchObject({
      errorText: expect.stringMatching(/^unresolved-attempt: tool call refund/),
    });

    // A person finds the refund made and abandons the call; the request sent again goes on.
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: UI_CHAT,
      runId: String(cut?.runId),
      actor,
    });
    if (refused === undefined) throw new Error("the refund was not refused");
    await recorder.abandon(refused.attempt, "refund 42 was made");
    const decided = await uiChatRequest(store, world, approvedAll(asked.messages));
    expect(decided.errors).toEqual([]);
    expect(textOf(decided.messages.at(-1))).toBe("order 42 is refunded");
    expect(world).toEqual({ refunds: 0, modelCalls: 1 });
    expect((await inspectSession(store, UI_CHAT)).unresolved).toEqual([]);
  });
});
