import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type ToOtelSpansOptions, toOtelSpans } from "../projections/to-otel-spans.js";
import type { EventStore } from "../store/event-store.js";

/**
 * Session `sessionId` of `store` as the spans `toOtelSpans` ends, through an in-memory exporter:
 * what a test of a projection reads. `@agent-ledger/core/testing/otel`, apart from `./testing`,
 * because it needs `@opentelemetry/sdk-trace-base` (an optional peer dependency).
 */
export async function exportedSpans(
  store: EventStore,
  sessionId: string,
  options: ToOtelSpansOptions = {},
): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  await toOtelSpans(store, sessionId, provider, options);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}
