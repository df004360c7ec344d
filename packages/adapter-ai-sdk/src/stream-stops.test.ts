import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectSession, LedgerError, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { stepCountIs, streamText, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { assistant as actor } from "./testing/scripted-model.test.data.js";
import {
  crashSiblingsInChild,
  SIBLINGS,
  siblingModel,
  siblingTools,
} from "./testing/sibling-tools.test.data.js";
import { type WrapToolsOptions, wrapTools } from "./wrap-tools.js";

// streamText does not throw when the run stops: the refusal of the next model call is an error
// part (and `onError`), the stream ends, and `result.text` resolves with what was said. The
// README's flow then closes the run with `completeRun`: refused while a call the crash left in
// flight has no outcome, so the run stays open and can be resumed once a person decides.

const scratch = scratchDirectory("ai-sdk-stream-stops-", { beforeAll, afterAll });

/** The `agent-ledger` binary a person runs: the CLI package's build (made by `tsc -b`). */
const BIN = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));

function agentLedger(path: string, ...args: string[]) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx tsc -b first`);
  return new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, "--store", `sqlite:${path}`, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "" }, timeout: 30_000 },
      (error, stdout, stderr) => (error ? reject(new Error(stdout + stderr)) : resolve(stdout)),
    );
  });
}

/** The README's streaming loop, resumed: stream the text, then close the run with it. */
async function streamThenComplete(
  store: SqliteEventStore,
  onUnresolved?: WrapToolsOptions["onUnresolved"],
) {
  const recorder = await SessionRecorder.resume({ store, actor, ...SIBLINGS });
  const effects: string[] = [];
  const tools = siblingTools({
    onEffect: (effect) => effects.push(effect),
    afterEffect: async () => undefined,
  });
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapLanguageModel({
      model: siblingModel("lookup").model,
      middleware: ledgerMiddleware({ recorder }),
    }),
    tools: wrapTools(tools, {
      recorder,
      idempotent: ["lookup"],
      ...(onUnresolved ? { onUnresolved } : {}),
    }),
    prompt: "Where is order 42? Then email bob.",
    stopWhen: stepCountIs(5),
    onError: ({ error }) => void errors.push(error),
  });
  let streamed = "";
  for await (const delta of result.textStream) streamed += delta;
  const text = await result.text;
  const completed = await recorder.completeRun({ text }).then(
    (event) => ({ event, error: undefined }),
    (error: unknown) => ({ event: undefined, error }),
  );
  return { streamed, text, errors, effects, ...completed };
}

describe("streamText resumed past a call the ledger refuses", () => {
  it("ends with unresolved-attempt at completeRun: the run stays open, and resumes once a person decides", async () => {
    const path = join(scratch, "crash.db");
    await crashSiblingsInChild("stream", "lookup", path);
    const store = new SqliteEventStore({ path });
    await store.init();
    try {
      const before = await readWholeRun(store, SIBLINGS);

      const stopped = await streamThenComplete(store);
      // What the stream said: the SDK neither throws nor rejects its text.
      expect(stopped.streamed).toBe("");
      expect(stopped.text).toBe("");
      // The stop reaches the app as an error part (onError): the refusal, with the attempt.
      expect(stopped.errors).toHaveLength(1);
      expect(LedgerError.isInstance(stopped.errors[0], "unresolved-attempt")).toBe(true);
      expect(stopped.errors[0]).toMatchObject({ attempt: { name: "send_email" } });
      // completeRun refuses: send_email has no outcome; nothing is written.
      expect(stopped.event).toBeUndefined();
      expect(stopped.error).toMatchObject({
        code: "unresolved-attempt",
        attempt: { name: "send_email", toolCallId: "c2" },
        details: { unresolved: [{ name: "send_email", toolCallId: "c2", kind: "tool" }] },
      });
      expect((stopped.error as Error).message).toContain("tool call send_email (c2)");
      const after = await readWholeRun(store, SIBLINGS);
      expect(after.filter((event) => event.type.startsWith("run."))).toEqual(
        before.filter((event) => event.type.startsWith("run.")),
      );
      // lookup ran again and is recorded; send_email is unresolved on a running run.
      expect(stopped.effects).toEqual(["lookup 42"]);
      const inspection = await inspectSession(store, SIBLINGS.sessionId);
      expect(inspection.runs.map((run) => run.status)).toEqual(["running"]);
      expect(inspection.unresolved.map((attempt) => attempt.name)).toEqual(["send_email"]);
      const printed = await agentLedger(path, "inspect", SIBLINGS.sessionId);
      expect(printed).toMatch(/\(r-siblings\) {2}RUNNING/);
      expect(printed).toMatch(/tool send_email \[c2\] {2}!! UNRESOLVED/);
      expect(printed).not.toContain("is completed: it takes no more events");

      // Resumed with a person's decision, the run finishes and completes.
      const resumed = await streamThenComplete(store, () => ({
        action: "abandon",
        reason: "checked: the email was sent",
      }));
      expect(resumed.text).toBe("All done");
      expect(resumed.error).toBeUndefined();
      expect(resumed.effects).toEqual([]);
      const done = await inspectSession(store, SIBLINGS.sessionId);
      expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
      expect(done.unresolved).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
