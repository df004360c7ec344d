import { LedgerError, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { fixture } from "./testing/fixture.js";
import { nestedAgentToolsFixture } from "./testing/nested-agent-tools.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

async function refusal(call: Promise<unknown>): Promise<LedgerError> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!LedgerError.isInstance(error)) throw new Error(`expected a LedgerError, got ${error}`);
  return error;
}

describe("resumeRun names the option at fault when there is nothing to resume", () => {
  test("a session or run the ledger does not hold is not-found at $.sessionId or $.runId", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    await runWithLedger(main, "sell a book", runOptions(store, model));

    const noSession = await refusal(
      resumeRun(main, { ...runOptions(store, model), sessionId: "nope" }),
    );
    expect(noSession).toMatchObject({ code: "not-found", path: "$.sessionId" });
    expect(noSession.message).toContain("session nope");
    // The next step: where the sessions are listed, and that the store may be the wrong one.
    expect(noSession.message).toContain("store.listSessions()");
    expect(noSession.message).toContain("agent-ledger sessions");
    const noRun = await refusal(resumeRun(main, { ...runOptions(store, model), runId: "nope" }));
    expect(noRun).toMatchObject({ code: "not-found", path: "$.runId" });
    expect(noRun.message).toContain("run nope not found in session s");
    // The runs to resume are named, and where the full list is.
    expect(noRun.message).toContain("its runs (child runs left out): root;");
    expect(noRun.message).toContain('store.listRuns("s")');
    // A store in memory has no URL to name: the person names theirs.
    expect(noRun.message).toContain(
      "`agent-ledger inspect -- s` (with --store <your store's URL> unless $AGENT_LEDGER_STORE names it)",
    );
  });

  test("a run that failed: run-closed, saying a closed run is not resumed and what to do instead", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture({ chargeThrows: true });
    const failing = { ...runOptions(store, model), maxTurns: 1 };
    await runWithLedger(main, "sell a book", failing).catch(() => undefined);
    const closed = await refusal(resumeRun(main, runOptions(store, model)));
    expect(closed).toMatchObject({ code: "run-closed" });
    expect(closed.message).toContain("run root is failed: nothing to resume");
    expect(closed.message).toContain("start a new run with runWithLedger (another runId)");
    expect(closed.message).toContain(
      "`agent-ledger inspect -- s` (with --store <your store's URL> unless $AGENT_LEDGER_STORE names it) shows how this one ended",
    );
  });

  test("stream: true is refused at $.stream, saying resumeRun does not stream and what it returns", async () => {
    const store = new MemoryEventStore();
    const { main, model } = fixture();
    const streamed = await refusal(
      resumeRun(main, { ...runOptions(store, model), stream: true } as never),
    );
    expect(streamed).toMatchObject({ code: "invalid-argument", path: "$.stream" });
    expect(streamed.message).toContain("resumeRun does not stream");
    expect(streamed.message).toContain("leave stream out");
    // Any stream option, as the README says: stream: false asks for nothing resumeRun does.
    const notStreamed = await refusal(
      resumeRun(main, { ...runOptions(store, model), stream: false } as never),
    );
    expect(notStreamed).toMatchObject({ code: "invalid-argument", path: "$.stream" });
  });

  test("a child run (a handoff's, an agent tool's) is refused at $.runId, naming the run to resume", async () => {
    const store = new MemoryEventStore();
    const shop = fixture();
    await runWithLedger(shop.main, "sell a book", runOptions(store, shop.model));
    const nested = nestedAgentToolsFixture({ chargeNeedsApproval: true });
    await runWithLedger(nested.outer, "go", runOptions(store, nested.model, "outer"));
    const started = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "run.started",
    );
    const runOf = (agent: string) => started.find((event) => event.actor?.id === agent)?.runId;
    const before = await readWholeSession(store, "s");

    const handoff = await refusal(
      resumeRun(shop.main, { ...runOptions(store, shop.model), runId: runOf("closer") ?? "" }),
    );
    expect(handoff).toMatchObject({ code: "invalid-argument", path: "$.runId" });
    expect(handoff.message).toContain(`run ${runOf("closer")} is a child run of root: resume root`);

    // Two levels down: the run to resume is the one at the top.
    const inner = await refusal(
      resumeRun(nested.outer, { ...runOptions(store, nested.model), runId: runOf("inner") ?? "" }),
    );
    expect(inner).toMatchObject({ code: "invalid-argument", path: "$.runId" });
    expect(inner.message).toContain(
      `run ${runOf("inner")} is a child run of ${runOf("mid")}, itself below outer: resume outer`,
    );
    expect(await readWholeSession(store, "s")).toEqual(before);
  });
});
