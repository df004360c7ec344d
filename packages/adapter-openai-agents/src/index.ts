export type { CallInFlightAtCrash } from "./calls-in-flight-at-crash.js";
export type { AwaitedCall, RunStateCheckpoint } from "./checkpoint.js";
export {
  loadRunStateCheckpoint,
  RUN_STATE_CHECKPOINT_FORMAT,
  saveRunStateCheckpoint,
} from "./checkpoint.js";
export type { ContextChange } from "./context-changes.js";
export { CONTEXT_CHANGED_EVENT_TYPE } from "./context-changes.js";
export type { InstrumentAgentOptions } from "./instrument-agent.js";
export { instrumentAgent } from "./instrument-agent.js";
export type { LedgerHandoffOptions } from "./ledger-handoff.js";
export { ledgerHandoff, ledgerHandoffEffect } from "./ledger-handoff.js";
export type { LocalTool } from "./ledger-local-tool.js";
export { ledgerLocalTool } from "./ledger-local-tool.js";
export type { LedgerModelOptions } from "./ledger-model.js";
export { isLedgerWrapped, ledgerModel, ledgerModelProvider } from "./ledger-model.js";
export type {
  LedgerRunOptions,
  ResumeRunOptions,
  RunWithLedgerOptions,
} from "./ledger-run-options.js";
export { APPROVAL_EVENT_TYPE } from "./ledger-state.js";
export type { LedgerToolOptions } from "./ledger-tool.js";
export { ledgerTool } from "./ledger-tool.js";
export type { McpToolEffect } from "./mcp-tools.js";
export type { LedgerRunResult, LedgerStreamedRun } from "./run-ends.js";
export { resumeRun, runWithLedger } from "./run-with-ledger.js";
export { openAiAgentsVersion } from "./sdk-version.js";
export { ledgerToolEffect } from "./tool-effects.js";
