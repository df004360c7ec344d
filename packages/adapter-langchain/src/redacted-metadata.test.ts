import { join } from "node:path";
import { LedgerError, type Redaction, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scanSqliteForSecret, scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { toolGraph } from "./testing/helpers.js";
import { EMAIL, SECRET, scrub } from "./testing/redacted-checkpoints.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

// What a recorder's `redact` removes reaches no stored byte, the metadata the handler records
// (LangChain tags, the thread) included; a thread_id it would remove is refused, not hidden. The
// same through both forms of the handler: a recorder given with its `redact`, or the handler's
// own `redact` on the store form, given to every recorder it opens. `scrub` is the README's
// redact function: every string loses the email and the key.

const scratch = scratchDirectory("langchain-redacted-metadata-", { beforeAll, afterAll });

const actor = { type: "agent", id: "support-agent", framework: "langchain" } as const;
/** Metadata on every event of the run, the user's email with it (the redaction reaches it). */
const metadata = { deployment: "eu-1", user: EMAIL };

/**
 * A model-and-tool graph (MemorySaver: the ledger's checkpoints keep the graph's state as it
 * is, see the README) run once on a SQLite ledger by a handler redacting with `redact`: on a
 * recorder made with it, or (`store`) on the store form given it. It runs in thread
 * `threadId`, the user's key in its prompt and email in its tags. Gives what the invocation
 * threw, where either secret is in the file (`scanSqliteForSecret`), the model and the run's
 * events.
 */
async function runGraph(
  name: string,
  form: "recorder" | "store",
  redact: Redaction,
  threadId: string,
) {
  const path = join(scratch, `${name}-${form}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  const run = { store, sessionId: "s", runId: "r", actor, redact, metadata };
  const handler = new LedgerCallbackHandler(
    form === "recorder" ? { recorder: new SessionRecorder(run) } : run,
  );
  const lookup = tool(async () => "found", { name: "lookup", schema: z.object({ q: z.string() }) });
  const model = new ScriptedChatModel((_messages, call) =>
    call === 1
      ? new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "lookup", args: { q: "x" } }] })
      : new AIMessage("done"),
  );
  const graph = toolGraph(model.bindTools([lookup]), [lookup], new MemorySaver());
  const invoked = graph
    .invoke(
      { messages: [{ role: "user", content: `hi, my key is ${SECRET}` }] },
      { configurable: { thread_id: threadId }, callbacks: [handler], tags: [`user:${EMAIL}`] },
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  const error = await invoked;
  const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
  await store.close();
  const hits = [
    ...(await scanSqliteForSecret(path, EMAIL)),
    ...(await scanSqliteForSecret(path, SECRET)),
  ];
  return { error, hits, model, events };
}

for (const form of ["recorder", "store"] as const)
  describe(`redact on what the handler records as metadata (${form} form)`, () => {
    it("a redact function reaches the prompt and the LangChain tags on every event: neither secret is in any stored row", async () => {
      const { error, hits, model, events } = await runGraph("tags", form, scrub, "thread-7f3a");
      expect(error).toBeUndefined();
      expect(model.calls).toBe(2);
      const requested = events.find((event) => event.type === "model.requested");
      expect(requested?.metadata).toMatchObject({
        deployment: "eu-1",
        user: "[email]",
        langchain: { tags: ["user:[email]"], threadId: "thread-7f3a" },
      });
      // Every event, the run's own included, carries the metadata as redacted.
      for (const event of events)
        expect(event.metadata).toMatchObject({ deployment: "eu-1", user: "[email]" });
      expect(hits).toEqual([]);
    });

    it("an email as thread_id, which the redaction removes, is refused before the id is written anywhere", async () => {
      const { error, hits, model } = await runGraph("thread", form, scrub, EMAIL);
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError & { path?: string }).path).toBe("$.configurable.thread_id");
      expect((error as Error).message).not.toContain(EMAIL);
      expect(model.calls).toBe(0);
      expect(hits).toEqual([]);
    });
  });
