import { join } from "node:path";
import { findLedgerError, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Command } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreMessages } from "./restore-messages.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import { FIRST, RUN, SECOND, SESSION, shopGraph } from "./testing/restore-threads.test.data.js";

const scratch = scratchDirectory("langchain-restore-threads-", { beforeAll, afterAll });
const address = { sessionId: SESSION, runId: RUN };

describe("restoreMessages on a run that served several LangGraph threads", () => {
  it("restores the thread it is asked for; without one it refuses rather than mix threads", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "threads.db");
    const crashed = await crashInChild("restore-threads:second-in-flight", path);
    expect(crashed.count(`send:${SECOND}`)).toBe(1);
    expect(crashed.count(`send:${FIRST}`)).toBe(1);
    const store = await openLedger(path, onTestFinished);

    // The last completed model call is the first thread's: without a thread, no guess.
    const refusal = await restoreMessages(store, address).catch((caught: unknown) => caught);
    expect(findLedgerError(refusal, "invalid-argument")?.path).toBe("$.threadId");
    expect(findLedgerError(refusal)?.message).toContain(FIRST);
    expect(findLedgerError(refusal)?.message).toContain(SECOND);

    // Each thread's own turn: its completion, its outcomes (the ids are the same in both).
    const second = await restoreMessages(store, address, { threadId: SECOND });
    expect(second.toolMessages.map((message) => [message.tool_call_id, message.content])).toEqual([
      ["call_1", `sent to ${SECOND}`],
    ]);
    expect(second.pendingToolCalls.map((call) => call.id)).toEqual(["call_2"]);
    expect(second.messages[0]?.content).toBe(SECOND);
    const first = await restoreMessages(store, address, { threadId: FIRST });
    expect(first.toolMessages.map((message) => message.content).sort()).toEqual([
      `sent to ${FIRST}`,
      `value of ${FIRST}`,
    ]);
    expect(first.pendingToolCalls).toEqual([]);
    // A thread the run has no call of (a typo) restores nothing: refused, not an empty turn.
    const unknown = await restoreMessages(store, address, { threadId: "thread-c" }).catch(
      (caught: unknown) => caught,
    );
    expect(findLedgerError(unknown, "not-found")?.details).toMatchObject({ threadId: "thread-c" });
    // The thread in the address (not the options) is a mistake said as such, not ignored.
    const misplaced = await restoreMessages(store, { ...address, threadId: FIRST } as never).catch(
      (caught: unknown) => caught,
    );
    expect(findLedgerError(misplaced, "invalid-argument")?.message).toContain("third argument");

    // The README's recipe, for the second thread: its send is answered by its own result, its
    // lookup runs again, and the model gets the second thread's results only.
    const resumed = shopGraph(store);
    const result = await resumed.graph.invoke(
      new Command({ update: { messages: second.toolMessages }, goto: "tools" }),
      threadConfig(resumed.handler, SECOND),
    );
    expect(result.messages.at(-1)?.content).toBe(
      `${SECOND}: sent to ${SECOND} | value of ${SECOND}`,
    );
    expect(resumed.sent).toEqual([]);
  });

  it("a thread asked of a run that recorded no call is not-found, not an empty turn", async ({
    onTestFinished,
  }) => {
    const store = await openLedger(join(scratch, "no-call.db"), onTestFinished);
    // A run the process opened and died in before its first call (or the wrong run).
    await new SessionRecorder({
      store,
      ...address,
      actor: { type: "agent", id: "graph" },
    }).startRun({});
    const refusal = await restoreMessages(store, address, { threadId: FIRST }).catch(
      (caught: unknown) => caught,
    );
    expect(findLedgerError(refusal, "not-found")).toMatchObject({
      path: "$.threadId",
      details: { threadId: FIRST },
    });
    // Without a thread it stays what it was: no turn to restore.
    expect(await restoreMessages(store, address)).toEqual({
      messages: [],
      pendingToolCalls: [],
      toolMessages: [],
    });
  });

  it("a threadId that is no string is refused", async ({ onTestFinished }) => {
    const store = await openLedger(join(scratch, "empty.db"), onTestFinished);
    const refusal = await restoreMessages(store, address, {
      threadId: 7 as unknown as string,
    }).catch((caught: unknown) => caught);
    expect(findLedgerError(refusal, "invalid-argument")?.path).toBe("$.threadId");
  });
});
