import { join } from "node:path";
import { inspectSession, LedgerError, type UnresolvedAttemptError } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { NoOutputGeneratedError } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVING_CHAT,
  ASK,
  approved,
  type RefundWorld,
  refundTurn,
} from "./testing/approving-chat.test.data.js";
import { CHAT, type ChatWorld, chatTurn, FIRST, SECOND } from "./testing/chat-server.test.data.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";

const scratch = scratchDirectory("ai-sdk-chat-server-", { beforeAll, afterAll });

describe("a chat server with a run per turn (README: A chat app)", () => {
  it("answers a turn sent again after its process died, and after it was answered, without paying twice", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "chat.db");
    const child = await crashInChild("chat server answering turn 2", path);
    // Turn 1 answered (two provider calls, one send); turn 2 sent its words, then died in the
    // call that answers them.
    expect(child.effects).toEqual(["send:hello Ann", "send:lunch at noon"]);
    expect(child.modelCalls).toBe(4);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    expect((await inspectSession(store, CHAT)).unresolved.map((call) => call.kind)).toEqual([
      "model",
    ]);

    // The client sends turn 2 again, to a new process: the turn's run is resumed, its first
    // call and the send are answered from the ledger, the call in flight is made again.
    const world: ChatWorld = { sent: [], modelCalls: 0 };
    // (Turn 1's messages, as the client holds them: its run answers them from the ledger.)
    const turn1 = await chatTurn(store, world, "1", [FIRST]);
    expect(turn1.text).toBe("told them (turn 1)");
    const again = await chatTurn(store, world, "2", [FIRST, ...turn1.messages, SECOND]);
    expect(again).toMatchObject({ text: "told them (turn 2)", status: "completed" });
    expect(world.sent).toEqual([]);
    expect(world.modelCalls).toBe(1);

    // Its answer was lost on the way: the client sends turn 2 once more. Answered from the
    // ledger: no provider call, no send.
    const once = await chatTurn(store, world, "2", [FIRST, ...turn1.messages, SECOND]);
    expect(once.text).toBe("told them (turn 2)");
    expect(once.messages).toEqual(again.messages);
    expect(world).toMatchObject({ sent: [], modelCalls: 1 });

    // The next turn is a run of its own, made live.
    const third = await chatTurn(store, world, "3", [
      FIRST,
      ...turn1.messages,
      SECOND,
      ...again.messages,
      { role: "user", content: "and bring Bo" },
    ]);
    expect(third.text).toBe("told them (turn 3)");
    expect(world).toMatchObject({ sent: ["and bring Bo"], modelCalls: 3 });
    const inspection = await inspectSession(store, CHAT);
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs.map((run) => [run.runId, run.status])).toEqual([
      ["turn-1", "completed"],
      ["turn-2", "completed"],
      ["turn-3", "completed"],
    ]);
  });

  it("a turn that begins with the approved tool a crash cut off is refused before any step: result.text rejects with the SDK's NoOutputGeneratedError", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "approving-chat.db");
    const child = await crashInChild("chat inside the refund its user approved", path);
    expect(child.effects).toEqual(["refund:42"]);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const [cut] = (await inspectSession(store, APPROVING_CHAT)).unresolved;
    expect(cut).toMatchObject({ runId: "turn-2", kind: "tool", name: "refund" });

    // The client sends turn 2 again: turn 1 is answered from the ledger, turn 2's run resumed.
    const world: RefundWorld = { refunds: 0, modelCalls: 0 };
    const turn1 = await refundTurn(store, world, "1", [ASK]);
    const again = await refundTurn(store, world, "2", approved(turn1.messages));
    // The refund is not made again, nor the model called: the turn has no step at all, so the
    // SDK rejects result.text with an error of its own; onError has the ledger's.
    expect(world).toEqual({ refunds: 0, modelCalls: 0 });
    expect("error" in again.text && NoOutputGeneratedError.isInstance(again.text.error)).toBe(true);
    const refused = again.errors.find((error) =>
      LedgerError.isInstance(error, "unresolved-attempt"),
    );
    expect(refused).toMatchObject({ attempt: { attemptId: cut?.attemptId } });
    expect(again.recorder.status).toBe("running");

    // A person finds the refund made, and abandons the call (the unresolved-attempt message's
    // recorder.abandon(error.attempt, reason)); the turn sent again goes on.
    await again.recorder.abandon((refused as UnresolvedAttemptError).attempt, "refund 42 made");
    const resolved = await refundTurn(store, world, "2", approved(turn1.messages));
    expect(resolved.text).toEqual({ value: "order 42 is refunded" });
    expect(world).toEqual({ refunds: 0, modelCalls: 1 });
  });
});
