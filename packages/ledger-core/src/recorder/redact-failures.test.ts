import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { scanSqliteForSecret } from "../testing/secret-scan.js";
import type { Redaction } from "./redact.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-redact-", { beforeAll, afterAll });

const secret = "sk-live-4f9a8b7c6d5e";

/** A redaction function of the kind users write: scrub every key-looking string. */
function scrub(value: JsonValue): JsonValue {
  if (typeof value === "string") return value.replaceAll(/sk-live-[0-9a-f]+/g, "[redacted]");
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item)]));
}

/** Provider and tool errors that quote the credential, as some HTTP clients do. */
async function failEverything(redact: Redaction, file: string) {
  const path = join(dir, file);
  const store = new SqliteEventStore({ path });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "a" },
    redact,
  });
  await recorder.startRun();
  const model = await recorder.beforeModelCall({ request: { prompt: "hi" } });
  await recorder.modelFailed(model, new Error(`401: invalid key ${secret}`), {
    partial: { text: "he" },
  });
  const tool = await recorder.beforeToolCall({ toolCallId: "t1", name: "fetch", args: {} });
  await recorder.toolFailed(
    tool,
    new Error("upstream failed", { cause: new Error(`Authorization: Bearer ${secret}`) }),
  );
  await recorder.failRun(new Error(`gave up after ${secret} was refused`));
  await store.close();
  return scanSqliteForSecret(path, secret);
}

describe("redaction of failures", () => {
  it("a redaction function sees failure payloads: a secret in an error message is not stored", async () => {
    expect(await failEverything((payload) => scrub(payload), "function.db")).toEqual([]);
  });

  it("paths into a failure payload (error.message, error.cause.message) are redacted", async () => {
    const paths = ["error.message", "error.cause.message", "error.stack", "error.cause.stack"];
    expect(await failEverything(paths, "paths.db")).toEqual([]);
  });

  it("a redacted message is taken out of the stack that repeats it, of the error and its causes", async () => {
    // Only the messages are named: their stacks ("Error: <message>\n    at ...") held them too.
    expect(await failEverything(["error.message", "error.cause.message"], "messages.db")).toEqual(
      [],
    );
    const store = new MemoryEventStore();
    const address = { sessionId: "s", runId: "r" };
    const actor = { type: "agent", id: "a" } as const;
    const redact = ["error.message", "error.cause.message"];
    const recorder = new SessionRecorder({ store, ...address, actor, redact });
    await recorder.startRun();
    const tool = await recorder.beforeToolCall({ name: "login", args: {} });
    const cause = new Error(`bad password ${secret}`);
    await recorder.toolFailed(tool, new Error(`login failed: ${secret}`, { cause }));
    const [failed] = (await readWholeRun(store, address)).filter(
      (event) => event.type === "tool.failed",
    );
    const payload = failed?.payload as { error: { stack: string; cause: { stack: string } } };
    const error = payload.error;
    // The frames stay: only the text the redaction removed is gone.
    expect(error.stack).toMatch(/^Error: \[redacted\]\n\s+at /);
    expect(error.cause.stack).toMatch(/^Error: \[redacted\]\n\s+at /);
    expect(JSON.stringify(payload)).not.toContain(secret);
  });

  it("a redacted message changed after its error was made is taken out of the stack too", async () => {
    // LangChain's addLangChainErrorFields appends a troubleshooting URL to a provider's error
    // after it was thrown, and a wrapper may prefix what it was doing. V8 writes a stack's first
    // line when it is first read: one read before (a logger, a retry printing it) holds the
    // message as it was then, which is not the message the redaction removes.
    const store = new MemoryEventStore();
    const address = { sessionId: "s", runId: "r" };
    const actor = { type: "agent", id: "a" } as const;
    const redact = ["error.message", "error.cause.message"];
    const recorder = new SessionRecorder({ store, ...address, actor, redact });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    const cause = new Error(`Incorrect API key provided: ${secret}`);
    void cause.stack;
    cause.message +=
      "\n\nTroubleshooting URL: https://docs.langchain.com/errors/MODEL_AUTHENTICATION/\n";
    const error = new Error(`401 ${secret}`, { cause });
    void error.stack;
    error.message = `calling the model: ${error.message}`;
    await recorder.modelFailed(model, error);
    const [failed] = (await readWholeRun(store, address)).filter(
      (event) => event.type === "model.failed",
    );
    const payload = failed?.payload as { error: { stack: string; cause: { stack: string } } };
    expect(JSON.stringify(payload)).not.toContain(secret);
    // The frames stay.
    expect(payload.error.stack).toMatch(/^Error: \[redacted\]\n\s+at /);
    expect(payload.error.cause.stack).toMatch(/^Error: \[redacted\]\n\s+at /);
  });
});
