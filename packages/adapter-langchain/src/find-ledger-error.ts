import { LedgerError, type LedgerErrorCode } from "@agent-ledger/core";

/**
 * The LedgerError inside an error LangGraph/createAgent threw: middleware errors arrive wrapped
 * (`MiddlewareError` with `cause`), errors of parallel tasks as an `AggregateError`.
 */
export function findLedgerError(error: unknown, code?: LedgerErrorCode): LedgerError | undefined {
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (LedgerError.isInstance(current, code)) return current;
    const { cause, errors } = current as { cause?: unknown; errors?: unknown };
    if (cause !== undefined) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return undefined;
}
