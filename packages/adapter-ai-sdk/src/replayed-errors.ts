import type { JsonObject, SerializedError } from "@agent-ledger/core";
import { APICallError } from "@ai-sdk/provider";

/** Metadata kept on `model.failed` so a replayed failure is retried (or not) as the original was. */
export function failureMetadataOf(error: unknown): JsonObject | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const aiSdk: JsonObject = { apiCallError: true, isRetryable: error.isRetryable };
  if (error.statusCode !== undefined) aiSdk.statusCode = error.statusCode;
  return { aiSdk };
}

/** An error rebuilt from the ledger, thrown where the original was. */
export function rebuildError(recorded: SerializedError, metadata?: JsonObject): Error {
  const aiSdk = metadata?.aiSdk as JsonObject | undefined;
  if (aiSdk?.apiCallError === true) {
    return new APICallError({
      message: recorded.message,
      url: "agent-ledger:replay",
      requestBodyValues: {},
      isRetryable: aiSdk.isRetryable === true,
      ...(typeof aiSdk.statusCode === "number" ? { statusCode: aiSdk.statusCode } : {}),
    });
  }
  const error = new Error(recorded.message);
  error.name = recorded.name;
  return error;
}

/** A recorded call that a person or policy abandoned: answered with this error on replay. */
export class AttemptAbandonedError extends Error {
  readonly reason: string;
  constructor(what: string, reason: string) {
    super(`${what} was abandoned: ${reason}`);
    this.name = "AttemptAbandonedError";
    this.reason = reason;
  }
}
