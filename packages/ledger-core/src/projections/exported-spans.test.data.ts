import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { EventStore } from "../store/event-store.js";
import { toOtelSpans } from "./to-otel-spans.js";

/** Session `sessionId` of `store` as the spans `toOtelSpans` ends, through an in-memory exporter. */
export async function exportedSpans(store: EventStore, sessionId: string): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  await toOtelSpans(store, sessionId, provider);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

/** A span's time (`[seconds, nanoseconds]`) in whole milliseconds, as the ledger records times. */
export function ms(time: [number, number]): number {
  return time[0] * 1000 + Math.round(time[1] / 1e6);
}
