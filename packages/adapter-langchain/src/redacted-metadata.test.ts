import { join } from "node:path";
import { LedgerError, type Redaction, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scanSqliteForSecret, scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { toolGraph } from "./testing/helpers.js";
import { EMAIL, scrub } from "./testing/redacted-checkpoints.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

// What a recorder's `redact` removes reaches no stored byte, the metadata the handler records
// (LangChain tags, the thread) included; a thread_id it would remove is refused, not hidden.
// `scrub` is the README's redact function: every string loses the email.

const scratch = scratchDirectory("langchain-redacted-metadata-", afterAll);

/**
 * A model-and-tool graph (MemorySaver: the ledger's checkpoints keep the graph's state as it
 * is, see the README) run once on a SQLite ledger by a handler on `recorder`, in thread
 * `threadId` with the user's email in its tags. Gives what the invocation threw, where the
 * email is in the file (`scanSqliteForSecret`), the model and the run's events.
 */
async function runGraph(name: string, redact: Redaction, threadId: string) {
  const path = join(scratch, `${name}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "support-agent", framework: "langchain" },
    redact,
  });
  const lookup = tool(async () => "found", { name: "lookup", schema: z.object({ q: z.string() }) });
  const model = new ScriptedChatModel((_messages, call) =>
    call === 1
      ? new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "lookup", args: { q: "x" } }] })
      : new AIMessage("done"),
  );
  const graph = toolGraph(model.bindTools([lookup]), [lookup], new MemorySaver());
  const invoked = graph
    .invoke(
      { messages: [{ role: "user", content: "hi" }] },
      {
        configurable: { thread_id: threadId },
        callbacks: [new LedgerCallbackHandler({ recorder })],
        tags: [`user:${EMAIL}`],
      },
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  const error = await invoked;
  const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
  await store.close();
  return { error, hits: await scanSqliteForSecret(path, EMAIL), model, events };
}

describe("redact on what the handler records as metadata", () => {
  it("a redact function reaches the LangChain tags on every event: the email is in no stored row", async () => {
    const { error, hits, model, events } = await runGraph("tags", scrub, "thread-7f3a");
    expect(error).toBeUndefined();
    expect(model.calls).toBe(2);
    const requested = events.find((event) => event.type === "model.requested");
    expect(requested?.metadata?.langchain).toMatchObject({
      tags: ["user:[email]"],
      threadId: "thread-7f3a",
    });
    expect(hits).toEqual([]);
  });

  it("an email as thread_id, which the redaction removes, is refused before the id is written anywhere", async () => {
    const { error, hits, model } = await runGraph("thread", scrub, EMAIL);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect((error as LedgerError & { path?: string }).path).toBe("$.configurable.thread_id");
    expect((error as Error).message).not.toContain(EMAIL);
    expect(model.calls).toBe(0);
    expect(hits).toEqual([]);
  });
});
