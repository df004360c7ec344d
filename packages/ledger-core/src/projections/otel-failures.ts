import type { Span } from "@opentelemetry/api";
import type { JsonObject } from "../events/json.js";
import { isObject, str } from "./extract.js";
import { STATUS_ERROR } from "./otel-api-values.js";
import { type AttemptRecord, isUnresolved } from "./session-model.js";

/**
 * `error.type` and the status message of a recorded failure. The conventions prefer the error's
 * code when it has one (`E503`, `ECONNRESET`), and an HTTP failure's status code as a string
 * (`429`): the recorded `code` when it is a string, else its HTTP `status`, else its name (a
 * class name such as `APICallError` tells a rate limit from an outage no better than `Error`).
 * A numeric `code` is not used: a driver's or gRPC's number means nothing without its library.
 */
function errorOf(payload: JsonObject): { type: string; message: string } {
  const error = payload.error;
  if (isObject(error))
    return {
      type:
        str(error.code) ??
        (typeof error.status === "number" ? String(error.status) : undefined) ??
        (typeof error.name === "string" && error.name ? error.name : "Error"),
      message: typeof error.message === "string" ? error.message : "",
    };
  return { type: "Error", message: typeof error === "string" ? error : "" };
}

/**
 * Marks `span` failed with the recorded failure at `at`: `error.type`, an error status, and an
 * `exception` event (`exception.type`: the error's class name; `.message`), which trace tools
 * show as the span's error. Not `.stacktrace`: a stack holds the machine's local file paths (as
 * the ATIF export, the export leaves them out).
 */
export function recordFailure(span: Span, payload: JsonObject, at: string): void {
  const error = errorOf(payload);
  span.setAttribute("error.type", error.type);
  span.setStatus({ code: STATUS_ERROR, message: error.message });
  const recorded = isObject(payload.error) ? payload.error : {};
  span.addEvent(
    "exception",
    { "exception.type": str(recorded.name) ?? error.type, "exception.message": error.message },
    new Date(at),
  );
}

/**
 * Marks the span of an attempt that got no answer it can show as a success: failed (see
 * `recordFailure`), abandoned, unresolved (in flight or lost in a crash), or retried without an
 * outcome of its own. A completed attempt is left as it is.
 */
export function markAttemptStatus({
  span,
  attempt,
  outcome,
}: {
  span: Span;
  attempt: AttemptRecord;
  /** The payload of its outcome event (`{}` without one). */
  outcome: JsonObject;
}): void {
  if (attempt.status === "failed" && attempt.outcome) {
    recordFailure(span, outcome, attempt.outcome.recordedAt);
  } else if (attempt.status === "abandoned") {
    span.setAttribute("error.type", "abandoned");
    span.setStatus({ code: STATUS_ERROR, message: `abandoned: ${String(outcome.reason ?? "")}` });
  } else if (isUnresolved(attempt)) {
    span.setAttribute("agent_ledger.attempt.unresolved", true);
    span.setAttribute("error.type", "unresolved");
    span.setStatus({
      code: STATUS_ERROR,
      message: "unresolved: requested, no outcome recorded (in flight or lost in a crash)",
    });
  } else if (attempt.status === "requested") {
    span.setAttribute("agent_ledger.attempt.retried_by", attempt.retriedBy ?? "");
    span.setAttribute("error.type", "retried");
    span.setStatus({ code: STATUS_ERROR, message: "no outcome recorded; retried" });
  }
}
