import { describe, expect, it } from "vitest";
import * as callbacks from "./callbacks.js";
import * as api from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DEFAULT_CHECKPOINT_SESSION",
      "LedgerCallbackHandler",
      "LedgerCheckpointSaver",
      "UNRESOLVED_ATTEMPT_INTERRUPT",
      "findLedgerError",
      "ledgerMiddleware",
      "messageFromJson",
      "messageToJson",
      "restoreMessages",
      "safeParams",
      "threadRunId",
      "toJsonValue",
      "toolEffect",
    ]);
  });

  it("the callbacks entry (no LangGraph) exports these names, the main entry's own", () => {
    expect(Object.keys(callbacks).sort()).toEqual([
      "LedgerCallbackHandler",
      "UNRESOLVED_ATTEMPT_INTERRUPT",
      "findLedgerError",
      "messageFromJson",
      "messageToJson",
      "restoreMessages",
      "safeParams",
      "toJsonValue",
      "toolEffect",
    ]);
    const main: Record<string, unknown> = { ...api };
    for (const [name, value] of Object.entries(callbacks)) expect(main[name]).toBe(value);
  });
});
