import type { EventStore } from "@agent-ledger/core";
import { toOtelSpans } from "@agent-ledger/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** Session `sessionId` of `store` as the spans `toOtelSpans` ends, through an in-memory exporter. */
export async function exportedSpans(store: EventStore, sessionId: string): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  await toOtelSpans(store, sessionId, provider);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}
