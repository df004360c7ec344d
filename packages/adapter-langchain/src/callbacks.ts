// `@agent-ledger/langchain/callbacks`: the callback handler and what goes with it, for an app
// on @langchain/core alone (chains, models and tools, no LangGraph, no `langchain` agents).
// Nothing here loads @langchain/langgraph, @langchain/langgraph-checkpoint or langchain, the
// package's optional peers; the main entry adds what needs them (the checkpoint saver, the
// middleware, threadRunId).
export { findLedgerError } from "@agent-ledger/core";
export type { LedgerCallbackHandlerOptions } from "./callback-handler.js";
export { LedgerCallbackHandler } from "./callback-handler.js";
export { messageToJson, safeParams, toJsonValue } from "./plain-json.js";
export type { RestoredMessages, RestoreMessagesOptions } from "./restore-messages.js";
export { restoreMessages } from "./restore-messages.js";
export { messageFromJson } from "./stored-messages.js";
export { toolEffect } from "./tool-effect.js";
export type { UnresolvedAttemptAnswer, UnresolvedAttemptQuestion } from "./unresolved-question.js";
export { UNRESOLVED_ATTEMPT_INTERRUPT } from "./unresolved-question.js";
