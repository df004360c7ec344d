import type { Attributes, AttributeValue, HrTime } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

// OTLP/JSON (opentelemetry-proto, JSON encoding): ids as hex strings, 64-bit integers as
// decimal strings, enums as numbers, field names in lowerCamelCase.

type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } };

export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  events: { timeUnixNano: string; name: string; attributes: OtlpKeyValue[] }[];
  links: { traceId: string; spanId: string; attributes: OtlpKeyValue[] }[];
  status: { code: number; message?: string };
}

/** An `ExportTraceServiceRequest` in OTLP/JSON. */
export interface OtlpTraceRequest {
  resourceSpans: {
    resource: { attributes: OtlpKeyValue[] };
    scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[];
  }[];
}

// A JavaScript number does not say int or double, so a whole one would be written as an int.
// These attributes are doubles in the GenAI conventions (a temperature of 1 is still 1.0): a
// backend that types attributes by key rejects or splits an int there.
const doubleKeys = new Set([
  "gen_ai.request.temperature",
  "gen_ai.request.top_p",
  "gen_ai.request.top_k",
  "gen_ai.request.frequency_penalty",
  "gen_ai.request.presence_penalty",
]);

function anyValue(value: AttributeValue, double = false): OtlpAnyValue {
  if (Array.isArray(value))
    return {
      arrayValue: {
        values: (value as unknown[])
          .filter((item) => item !== null && item !== undefined)
          .map((item) => anyValue(item as AttributeValue, double)),
      },
    };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number")
    return Number.isInteger(value) && !double
      ? { intValue: String(value) }
      : { doubleValue: value };
  return { stringValue: String(value) };
}

function keyValues(attributes: Attributes): OtlpKeyValue[] {
  return Object.entries(attributes)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => ({
      key,
      value: anyValue(value as AttributeValue, doubleKeys.has(key)),
    }));
}

function nanos(time: HrTime): string {
  return (BigInt(time[0]) * 1_000_000_000n + BigInt(time[1])).toString();
}

/**
 * Spans as an OTLP/JSON `ExportTraceServiceRequest` (what an OTLP/HTTP collector accepts at
 * `/v1/traces` with `Content-Type: application/json`). Span kinds are shifted to the proto
 * enum (api INTERNAL 0 -> SPAN_KIND_INTERNAL 1).
 */
export function toOtlpJson(
  spans: readonly ReadableSpan[],
  options: { resourceAttributes?: Attributes } = {},
): OtlpTraceRequest {
  const byResource = new Map<
    unknown,
    Map<string, { scope: { name: string; version?: string }; spans: OtlpSpan[] }>
  >();
  const resources = new Map<unknown, Attributes>();
  for (const span of spans) {
    const resource = span.resource;
    resources.set(resource, {
      ...(resource.attributes as Attributes),
      ...options.resourceAttributes,
    });
    let scopes = byResource.get(resource);
    if (!scopes) {
      scopes = new Map();
      byResource.set(resource, scopes);
    }
    const scopeKey = `${span.instrumentationScope.name}@${span.instrumentationScope.version ?? ""}`;
    let scope = scopes.get(scopeKey);
    if (!scope) {
      scope = {
        scope: {
          name: span.instrumentationScope.name,
          ...(span.instrumentationScope.version
            ? { version: span.instrumentationScope.version }
            : {}),
        },
        spans: [],
      };
      scopes.set(scopeKey, scope);
    }
    const context = span.spanContext();
    const otlp: OtlpSpan = {
      traceId: context.traceId,
      spanId: context.spanId,
      name: span.name,
      kind: span.kind + 1,
      startTimeUnixNano: nanos(span.startTime),
      endTimeUnixNano: nanos(span.endTime),
      attributes: keyValues(span.attributes),
      events: span.events.map((event) => ({
        timeUnixNano: nanos(event.time),
        name: event.name,
        attributes: keyValues(event.attributes ?? {}),
      })),
      links: span.links.map((link) => ({
        traceId: link.context.traceId,
        spanId: link.context.spanId,
        attributes: keyValues(link.attributes ?? {}),
      })),
      status: {
        code: span.status.code,
        ...(span.status.message ? { message: span.status.message } : {}),
      },
    };
    if (span.parentSpanContext) otlp.parentSpanId = span.parentSpanContext.spanId;
    scope.spans.push(otlp);
  }
  return {
    resourceSpans: [...byResource.entries()].map(([resource, scopes]) => ({
      resource: { attributes: keyValues(resources.get(resource) ?? {}) },
      scopeSpans: [...scopes.values()],
    })),
  };
}
