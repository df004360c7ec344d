import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  inspectSession,
  readWholeSession,
  resolveEvents,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scanSqliteForSecret, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import {
  EMAIL,
  encryptingSerde,
  RUN,
  redactedAgent,
  SECRET,
  SESSION,
  scrub,
  scrubbingRecorder,
  USER_MESSAGE,
} from "./testing/redacted-checkpoints.test.data.js";

const scratch = scratchDirectory("langchain-redacted-checkpoints-", { beforeAll, afterAll });

// What the README's "Secrets in the graph's state" says: the recorder's redaction covers the
// handler's events, not the saver's checkpoints, which hold the graph's state for the resume.
describe("a key and an email in a graph's conversation, the recorder redacting them", () => {
  it("the saver's checkpoints hold them (as base64 serde bytes): its redaction does not reach them", async () => {
    const path = join(scratch, "plain.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const recorder = scrubbingRecorder(store);
    await redactedAgent({ recorder }, {}).invoke(USER_MESSAGE);
    const run = JSON.stringify(await resolveEvents(store, await readWholeSession(store, SESSION)));
    await store.close();
    for (const secret of [SECRET, EMAIL]) {
      expect(run).not.toContain(secret);
      expect(await scanSqliteForSecret(path, secret)).not.toEqual([]);
    }
  });

  it("with a saver sealing its bytes, nothing holds them, and a resume after a SIGKILL reads the live values", async ({
    onTestFinished,
  }) => {
    const key = randomBytes(32);
    const path = join(scratch, "sealed.db");
    const first = await crashInChild("redacted-checkpoints", path, key.toString("hex"));
    expect(first.count("lookup")).toBe(1);
    const store = await openLedger(path, onTestFinished);
    expect((await inspectSession(store, SESSION)).unresolved).toHaveLength(1);

    const actor = { type: "agent", id: "support" } as const;
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor,
      redact: scrub,
    });
    const prompts: string[] = [];
    const second = redactedAgent(
      { recorder: resumed },
      {
        serde: encryptingSerde(key),
        read: (prompt) => prompts.push(prompt),
      },
    );
    const result = await second.invoke(null);
    expect(result.messages.at(-1)?.content).toBe(`sent ${SECRET} to ${EMAIL}`);
    // The model read the tool's result from the checkpoint, as the live run had it.
    expect(prompts).toEqual([expect.stringContaining(`key of ${EMAIL}: ${SECRET}`)]);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    for (const secret of [SECRET, EMAIL])
      expect(await scanSqliteForSecret(path, secret)).toEqual([]);
  });

  it("on the handler's store form (its own redact), a resume after a SIGKILL keeps redacting and is answered the recorded lookup instead of running it again", async ({
    onTestFinished,
  }) => {
    const key = randomBytes(32);
    const path = join(scratch, "store-form.db");
    // Killed once lookup's result was committed, before LangGraph saved the tools node's write.
    const first = await crashInChild("redacted-store-form", path, key.toString("hex"));
    expect(first.count("lookup")).toBe(1);
    const store = await openLedger(path, onTestFinished);

    const prompts: string[] = [];
    const second = redactedAgent(
      { store },
      { serde: encryptingSerde(key), read: (prompt) => prompts.push(prompt) },
    );
    const result = await second.invoke(null);
    // The tools node ran again: its lookup, made with the live email, matched the recorded one
    // (its request hashed after the same redaction) and was answered from the ledger as stored,
    // the email and the key redacted (core README, "After a crash"), not run again. The model
    // call before it was in the checkpoint; only the one after it reached the model. (One
    // attempt of each step, below: a lookup run again would be a second.)
    expect(prompts).toEqual([expect.stringContaining("key of [email]: [key]")]);
    expect(result.messages.at(-1)?.content).toBe(`sent ${SECRET} to ${EMAIL}`);
    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    const steps = runs.find((run) => run.runId === RUN)?.steps ?? [];
    expect(steps.map((step) => [step.kind, step.attempts.length])).toEqual([
      ["model", 1],
      ["tool", 1],
      ["model", 1],
    ]);
    for (const secret of [SECRET, EMAIL])
      expect(await scanSqliteForSecret(path, secret)).toEqual([]);
  });
});
