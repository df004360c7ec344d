import { isJsonObject, type SerializedError } from "./json.js";

/** An `Error` rebuilt by `rebuiltError`: the fields `normalizeError` kept, where the original had them. */
export type RebuiltError = Error & { code?: string | number; status?: number };

/**
 * The error a recorded failure (`SerializedError`, as `normalizeError` made it) stands for,
 * rebuilt to be thrown again where the original was: on resume, a call that failed is answered
 * by failing the same way. Code that branches on the error (a retry policy reading
 * `status === 429` or `code === "ECONNRESET"`, an app's `error.name === "AbortError"`) decides
 * as it did live, as far as the ledger recorded it: `name`, `message`, `code` and `status` are
 * set as recorded, and the cause chain is rebuilt as Errors too (frameworks walk `cause` only
 * through `instanceof Error`). The class is not kept (the error is an `Error` whatever the
 * original's class was), nor the recorded stack, which points into the process that recorded it:
 * the rebuilt error's own stack says where it was thrown again. A value read back from a ledger
 * is the payload as stored (a redaction may have changed it): a field of the wrong type is left
 * out, a name or message that is not a text is "Error" or "".
 */
export function rebuiltError(recorded: SerializedError): RebuiltError {
  const fields = recorded as unknown as Record<string, unknown>;
  const cause = isJsonObject(fields.cause)
    ? rebuiltError(fields.cause as unknown as SerializedError)
    : undefined;
  const message = typeof fields.message === "string" ? fields.message : "";
  const error: RebuiltError = new Error(message, cause ? { cause } : undefined);
  error.name = typeof fields.name === "string" ? fields.name : "Error";
  const code = fields.code;
  if (typeof code === "string" || (typeof code === "number" && Number.isFinite(code)))
    error.code = code;
  if (Number.isInteger(fields.status)) error.status = fields.status as number;
  return error;
}
