import { expect, test } from "vitest";
import * as api from "./index.js";

test("the public surface is pinned", () => {
  expect(Object.keys(api).sort()).toEqual([
    "APPROVAL_EVENT_TYPE",
    "CONTEXT_CHANGED_EVENT_TYPE",
    "RUN_STATE_CHECKPOINT_FORMAT",
    "instrumentAgent",
    "isLedgerWrapped",
    "ledgerHandoff",
    "ledgerHandoffEffect",
    "ledgerLocalTool",
    "ledgerModel",
    "ledgerModelProvider",
    "ledgerTool",
    "ledgerToolEffect",
    "loadRunStateCheckpoint",
    "openAiAgentsVersion",
    "resumeRun",
    "runWithLedger",
    "saveRunStateCheckpoint",
  ]);
});
