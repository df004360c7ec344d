export { chatTurnId } from "./chat-turn-id.js";
export type { LedgerEmbeddingMiddlewareOptions } from "./embedding-middleware.js";
export { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
export type { InnerCallsSettledOptions } from "./inner-calls-settled.js";
export { innerCallsSettled } from "./inner-calls-settled.js";
export type { LedgerMiddlewareOptions } from "./ledger-middleware.js";
export { ledgerMiddleware } from "./ledger-middleware.js";
export type { RecordedModelResponse } from "./model-response.js";
export { AttemptAbandonedError } from "./replayed-errors.js";
export type {
  PendingToolCall,
  RestoredConversation,
  RestoreMessagesOptions,
} from "./restore-messages.js";
export { restoreConversation, restoreMessages } from "./restore-messages.js";
export type { UnresolvedDecision, UnresolvedToolCall, WrapToolsOptions } from "./wrap-tools.js";
export { wrapTools } from "./wrap-tools.js";
