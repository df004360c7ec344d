import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { readWholeSession } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { scanSqliteForSecret } from "../testing/secret-scan.js";
import { SessionRecorder } from "./session-recorder.js";

// An adapter handed a recorder closes the runs a crashed process left open under it (a
// LangGraph subgraph's child run). Resumed with `SessionRecorder.resume` and options of its
// own, what it wrote there (the error failing the run) escaped the redaction the user gave the
// recorder, which the adapter could not read: `resumeOtherRun` resumes it as that recorder records.

const scratch = scratchDirectory("resume-other-run-", { beforeAll, afterAll });
const agent: Actor = { type: "agent", id: "main" };
const sub: Actor = { type: "agent", id: "research" };
const KEY = "sk-live-0123456789";
const scrub = ["**.message", "metadata.user"];

async function openLedger(name: string) {
  const store = new SqliteEventStore({ path: join(scratch, `${name}.db`) });
  await store.init();
  return store;
}

describe("SessionRecorder.resumeOtherRun", () => {
  it("continues a child run a crashed process left open with this recorder's redaction and metadata", async () => {
    const path = join(scratch, "left-open.db");
    const store = await openLedger("left-open");
    // The crashed process: a run, and a child run it never ended.
    const crashed = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: agent });
    await crashed.startRun();
    const inner = crashed.child({ runId: "r>research", actor: sub });
    await inner.startRun();

    const recorder = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor: agent,
      redact: scrub,
      metadata: { user: "alice@example.com", tenant: "acme" },
    });
    const left = await recorder.resumeOtherRun({ runId: "r>research", actor: sub });
    expect(left.resumed).toBe(true);
    await left.failRun(new Error(`the provider refused key ${KEY}`));
    await recorder.failRun(new Error(`gave up with key ${KEY}`));

    const events = await readWholeSession(store, "s");
    const failed = events.find(
      (event) => event.runId === "r>research" && event.type === "run.failed",
    );
    expect(failed?.payload).toMatchObject({ error: { message: "[redacted]" } });
    expect(failed?.metadata).toEqual({ user: "[redacted]", tenant: "acme" });
    // The child run is still the crashed process's child, as its run.started says.
    expect(events.find((event) => event.runId === "r>research")?.parentRunId).toBe("r");
    await store.close();
    expect(await scanSqliteForSecret(path, KEY)).toEqual([]);
    expect(await scanSqliteForSecret(path, "alice@example.com")).toEqual([]);
  });

  it("refuses options it does not take, and a run the ledger does not hold, writing nothing", async () => {
    const store = await openLedger("refused");
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: agent });
    await recorder.startRun();
    const refusal = (options: unknown) =>
      recorder.resumeOtherRun(options as { runId: string; actor: Actor }).then(
        () => undefined,
        (error: unknown) => error,
      );
    const missing = await refusal(undefined);
    expect(LedgerError.isInstance(missing, "invalid-argument") && missing.path).toBe("$");
    const extra = await refusal({ runId: "x", actor: sub, redact: [] });
    expect(LedgerError.isInstance(extra, "invalid-argument") && extra.path).toBe("$.redact");
    const noRun = await refusal({ runId: "nowhere", actor: sub });
    expect(LedgerError.isInstance(noRun, "not-found")).toBe(true);
    const events = await readWholeSession(store, "s");
    expect(events.map((event) => event.type)).toEqual(["run.started"]);
    await store.close();
  });
});
