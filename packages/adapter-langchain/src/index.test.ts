import { describe, expect, it } from "vitest";
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
});
