import { join } from "node:path";
import { findLedgerError, inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { payloadOf, runEvents } from "./testing/helpers.js";
import { RUN, SESSION, world } from "./testing/tool-effect.test.data.js";

const scratch = scratchDirectory("langchain-tool-effect-", { beforeAll, afterAll });

describe("callback only: a tool's idempotent/effect declaration is its own", () => {
  it("neither a sibling tool of the same invoke nor a tool it calls gets it, and on resume the undeclared one is not run again", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "ledger.db");
    // The process dies inside send (after lookup and audit are recorded).
    const first = await crashInChild("tool-effect:crash-in-send", path);
    const store = await openLedger(path, onTestFinished);
    const effects = Object.fromEntries(
      (await runEvents(store, SESSION, RUN))
        .filter((event) => event.type === "tool.requested")
        .map((event) => payloadOf<{ name: string; effect: unknown }>(event))
        .map((payload) => [payload.name, payload.effect]),
    );
    expect(effects).toEqual({
      lookup: { kind: "read", idempotent: true },
      audit: { kind: "unknown", idempotent: false },
      send: { kind: "unknown", idempotent: false },
    });
    expect((await inspectSession(store, SESSION)).unresolved.map((a) => a.name)).toEqual(["send"]);

    // A new process resumes: send, in flight at the crash and not idempotent, does not run.
    const second = world(store);
    // Callback only: the tool node turns the refusal into a ToolMessage, and the handler
    // refuses the model call after it, with the same error.
    const error = await second.invoke(null).catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")?.message).toMatch(
      /^tool call send \(call-send\) was in flight/,
    );
    expect(first.count("send") + second.runs.send).toBe(1);
  });
});
