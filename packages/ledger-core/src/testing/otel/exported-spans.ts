import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type ToOtelSpansOptions, toOtelSpans } from "../../projections/to-otel-spans.js";
import type { EventStore } from "../../store/event-store.js";

/**
 * Session `sessionId` of `store` as the spans `toOtelSpans` ends, through an in-memory
 * exporter: what an adapter's tests check the spans of the sessions they record with.
 * `options` go to `toOtelSpans` as they are; their `ids`, if any, are the provider's
 * `idGenerator` too, as `toOtelSpans` requires.
 *
 * Needs `@opentelemetry/sdk-trace-base` 2.x, an optional peer dependency of
 * `@agent-ledger/core` that only this subpath loads, and so Node 20.6.0 or later (that
 * package's engines: `^18.19.0 || >=20.6.0`), where the rest of `@agent-ledger/core` runs on any
 * Node 20.
 */
export async function exportedSpans(
  store: EventStore,
  sessionId: string,
  options: ToOtelSpansOptions = {},
): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(options.ids === undefined ? {} : { idGenerator: options.ids }),
  });
  await toOtelSpans(store, sessionId, provider, options);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}
