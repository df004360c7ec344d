import { sha256Hex } from "@agent-ledger/core";
import type { OtlpSpan, OtlpTraceRequest } from "./otlp-json.js";

/** `length` hex digits of sha256 over `parts`; never all zeros (an invalid id in OTLP). */
function derivedId(length: number, parts: (string | undefined)[]): string {
  const hex = sha256Hex(JSON.stringify(parts)).slice(0, length);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

function stringAttribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes.find((attribute) => attribute.key === key)?.value;
  return value !== undefined && "stringValue" in value ? value.stringValue : undefined;
}

/**
 * The spans of `toOtelSpans` with ids derived from the ledger instead of the SDK's random ones:
 * a run's span from (session, run), an attempt's from (session, run, attempt), a trace from
 * (session, root run). Exporting a session twice then gives the same ids, so a backend that
 * imports both sees one trace, not two; and a span keeps its id while its session grows.
 * Parents and links are renamed to match. A span without the ledger's run attribute (none
 * that `toOtelSpans` makes) keeps its id.
 */
export function withLedgerIds(request: OtlpTraceRequest, sessionId: string): OtlpTraceRequest {
  const spanIds = new Map<string, string>();
  const traceIds = new Map<string, string>();
  const spans = request.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) => scope.spans),
  );
  for (const span of spans) {
    const runId = stringAttribute(span, "agent_ledger.run.id");
    if (runId === undefined) continue;
    const attemptId = stringAttribute(span, "agent_ledger.attempt.id");
    spanIds.set(
      span.spanId,
      derivedId(
        16,
        attemptId === undefined
          ? ["run", sessionId, runId]
          : ["attempt", sessionId, runId, attemptId],
      ),
    );
    // One trace per root run: its children carry its traceId.
    if (span.parentSpanId === undefined && attemptId === undefined)
      traceIds.set(span.traceId, derivedId(32, ["trace", sessionId, runId]));
  }
  const spanId = (id: string) => spanIds.get(id) ?? id;
  const traceId = (id: string) => traceIds.get(id) ?? id;
  return {
    resourceSpans: request.resourceSpans.map((resource) => ({
      ...resource,
      scopeSpans: resource.scopeSpans.map((scope) => ({
        ...scope,
        spans: scope.spans.map((span) => ({
          ...span,
          traceId: traceId(span.traceId),
          spanId: spanId(span.spanId),
          ...(span.parentSpanId === undefined ? {} : { parentSpanId: spanId(span.parentSpanId) }),
          links: span.links.map((link) => ({
            ...link,
            traceId: traceId(link.traceId),
            spanId: spanId(link.spanId),
          })),
        })),
      })),
    })),
  };
}
