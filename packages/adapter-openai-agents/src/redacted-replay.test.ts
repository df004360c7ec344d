import { join } from "node:path";
import { readWholeSession, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scanSqliteForSecret, scratchDirectory } from "@agent-ledger/core/testing";
import { Runner, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { ledgerTool, resumeRun } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import {
  decliningAgent,
  hideReceipt,
  RECEIPT,
  RECEIPT_PATH,
  receiptAgent,
} from "./testing/receipt-agent.js";
import { runOptions } from "./testing/recorded-run.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

const BY_PATH = "receipt redacted by path: dies in the model call after the charge";
const BY_FUNCTION = "receipt redacted by a function: dies in the model call after the charge";
const DECLINED = "declined charge redacted by a function: dies in the model call after it";

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-redacted-replay-", { beforeAll, afterAll });
// The ledgers a test records on itself.
const scratch = scratchDirectory("oa-redacted-ledgers-", { beforeAll, afterAll });
ledgers.prepare(BY_PATH, BY_FUNCTION, DECLINED);

// What the README's `redact` entry says a resumed run gives the model for a redacted result.
describe("a redacted tool result, after a crash", () => {
  test("by path: removed from the tool's result, not from the next request's text, and the resume stops there", async () => {
    const { store, first } = await ledgers.crashed(BY_PATH);
    expect(first.effects).toEqual(["charge 7"]);
    const events = await readWholeSession(store, "s");
    const completed = events.find((event) => event.type === "tool.completed");
    expect(completed?.payload).toMatchObject({ result: { receipt: "[redacted]" } });
    // The SDK sends the result as JSON text: out of the path's reach.
    const requests = events.filter((event) => event.type === "model.requested");
    expect(JSON.stringify(requests.at(-1)?.payload)).toContain(RECEIPT);

    const second = receiptAgent();
    second.model.calls = 1;
    await expect(
      resumeRun(second.agent, { ...runOptions(store, second.model), redact: RECEIPT_PATH }),
    ).rejects.toMatchObject({ code: "replay-divergence" });
    expect(second.effects).toEqual([]);
  });

  test("by a function that reaches the text: the resume goes on, and the model reads the redacted result", async () => {
    const { store, first } = await ledgers.crashed(BY_FUNCTION);
    expect(first.effects).toEqual(["charge 7"]);
    expect(JSON.stringify(await readWholeSession(store, "s"))).not.toContain(RECEIPT);

    const second = receiptAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      redact: hideReceipt,
    });
    expect(result.status).toBe("completed");
    // Live, the model read the receipt and said "paid".
    expect(result.finalOutput).toBe("not paid");
    expect(second.effects).toEqual([]);
  });
});

// What the SDK tells the model of a tool that threw (its errorFunction's text, quoting the
// error) is recorded on the call's tool.failed, and a resumed run tells the model the same.
describe("a redacted tool error the model was told of, after a crash", () => {
  test("by a function: the text the model was told is redacted too, and the resume goes on from it", async () => {
    const { store, path, first } = await ledgers.crashed(DECLINED);
    expect(first.effects).toEqual(["charge 7"]);
    const events = await readWholeSession(store, "s");
    const failed = events.find((event) => event.type === "tool.failed");
    expect(failed?.metadata?.modelWasTold).toContain("card declined, [receipt]");
    expect(await scanSqliteForSecret(path, RECEIPT)).toEqual([]);

    const second = decliningAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      redact: hideReceipt,
    });
    expect(result.status).toBe("completed");
    // Live, the model read the receipt in the error; the charge is not made again.
    expect(result.finalOutput).toBe("declined");
    expect(second.effects).toEqual([]);
  });
});

describe("a ledgerTool given a recorder of its own, run outside runWithLedger", () => {
  test("what the model was told of its error is redacted with that recorder's redaction", async () => {
    const path = join(scratch, "own-recorder.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const actor = { type: "agent", id: "main" } as const;
    const recorder = new SessionRecorder({ store, sessionId: "s", actor, redact: hideReceipt });
    await recorder.startRun();
    const made = decliningAgent();
    for (const tool of made.agent.tools)
      if (tool.type === "function") ledgerTool(tool, { recorder });
    const runner = new Runner({ modelProvider: scriptedProvider(made.model) });
    const result = await runner.run(made.agent, "sell");
    // Live, the model read the receipt in the error.
    expect(result.finalOutput).toBe("declined, ref seen");
    const events = await readWholeSession(store, "s");
    const failed = events.find((event) => event.type === "tool.failed");
    expect(failed?.metadata?.modelWasTold).toContain("card declined, [receipt]");
    // Nowhere in the file's tables (payloads, metadata, blobs) either.
    expect(await scanSqliteForSecret(path, RECEIPT)).toEqual([]);
  });
});
