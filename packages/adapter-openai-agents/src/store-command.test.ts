import { join } from "node:path";
import { LedgerError } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { pastedCommand } from "./testing/agent-ledger-cli.js";
import { fixture } from "./testing/fixture.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

const directory = scratchDirectory("oa-store-command-", { beforeAll, afterAll });
// Where the person on call runs the commands a message prints: not beside the ledger.
const elsewhere = scratchDirectory("oa-store-command-shell-", { beforeAll, afterAll });

const GENERIC = "(with --store <your store's URL> unless $AGENT_LEDGER_STORE names it)";

describe("the agent-ledger commands the adapter's messages print name the run's store", () => {
  test("a SQLite file whose path and session id need quoting: the printed inspect command, pasted into a shell elsewhere, reads that session", async () => {
    const path = join(directory, "it's my ledger.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    // An id that starts like an option and holds a direction control a terminal must not show.
    const sessionId = "-s'\u202eq";
    const { main, model } = fixture();
    const options = { store, sessionId, modelProvider: scriptedProvider(model) };
    await runWithLedger(main, "sell a book", { ...options, runId: "root" });
    const error = await resumeRun(main, { ...options, runId: "nope" }).catch(
      (failure: unknown) => failure,
    );
    expect(LedgerError.isInstance(error, "not-found")).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(
      `\`agent-ledger inspect --store 'sqlite:${directory}/it'\\''s my ledger.db' -- $'-s\\'\\u202eq'\``,
    );
    expect(message).not.toContain(GENERIC);
    const printed = /`(agent-ledger inspect [^`]*)`/.exec(message)?.[1] ?? "";
    const inspected = await pastedCommand(printed, elsewhere);
    expect(inspected).toMatchObject({ code: 0, stderr: "" });
    expect(inspected.stdout).toContain("main (root)  COMPLETED");
    await store.close();
  });
});
