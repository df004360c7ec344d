import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { derivedOtelId, LedgerIdGenerator } from "./otel-ids.js";
import { recordFixtureSession } from "./session-fixture.test.data.js";
import { type ToOtelSpansOptions, toOtelSpans } from "./to-otel-spans.js";

/** A provider that keeps its finished spans, with `ids` as its generator when given. */
function tracing(ids?: LedgerIdGenerator) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(ids ? { idGenerator: ids } : {}),
  });
  return { exporter, provider };
}

/** Each span's name, ids, parent and links, in a stable order. */
function shapeOf(spans: ReadableSpan[]) {
  return spans
    .map((span) => ({
      name: span.name,
      attempt: span.attributes["agent_ledger.attempt.id"],
      run: span.attributes["agent_ledger.run.id"],
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId,
      links: span.links.map((link) => link.context.spanId),
    }))
    .sort((a, b) => a.spanId.localeCompare(b.spanId));
}

async function exportSpans(
  store: MemoryEventStore,
  sessionId: string,
  withIds: boolean,
): Promise<ReadableSpan[]> {
  const ids = withIds ? new LedgerIdGenerator() : undefined;
  const { exporter, provider } = tracing(ids);
  await toOtelSpans(store, sessionId, provider, ids ? { ids } : {});
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

describe("toOtelSpans with a LedgerIdGenerator", () => {
  it("gives every span the id derived from its session, run and attempt, the same on every export", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const first = await exportSpans(store, fixture.sessionId, true);
    const second = await exportSpans(store, fixture.sessionId, true);
    expect(shapeOf(second)).toEqual(shapeOf(first));
    // Without it, the SDK's ids are random: the comparison above means something.
    const random = await exportSpans(store, fixture.sessionId, false);
    expect(shapeOf(random).map((span) => span.spanId)).not.toEqual(
      shapeOf(first).map((span) => span.spanId),
    );

    const trace = derivedOtelId(32, ["trace", fixture.sessionId, fixture.rootRunId]);
    for (const span of shapeOf(first)) {
      // One trace: the child run's spans are under the root run's.
      expect(span.traceId).toBe(trace);
      expect(span.spanId).toBe(
        span.attempt === undefined
          ? derivedOtelId(16, ["run", fixture.sessionId, span.run as string])
          : derivedOtelId(16, [
              "attempt",
              fixture.sessionId,
              span.run as string,
              span.attempt as string,
            ]),
      );
    }
    const byId = new Set(first.map((span) => span.spanContext().spanId));
    expect(byId.size).toBe(first.length);
    const shapes = shapeOf(first);
    const related = shapes.flatMap((span) => [
      ...(span.parentSpanId === undefined ? [] : [span.parentSpanId]),
      ...span.links,
    ]);
    // Every span but the root has a parent, and some have links.
    expect(related.length).toBeGreaterThan(first.length - 1);
    for (const id of related) expect(byId).toContain(id);
    const child = shapes.find((span) => span.run === fixture.childRunId && !span.attempt);
    expect(child?.parentSpanId).toBeDefined();
  });

  it("keeps the ids of a session's spans while it grows, and gives other spans random ids", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "growing",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(call, { text: "one" });
    const before = shapeOf(await exportSpans(store, "growing", true));

    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    await recorder.toolCompleted(tool, 1);
    await recorder.completeRun("done");
    const after = shapeOf(await exportSpans(store, "growing", true));
    expect(after).toHaveLength(before.length + 1);
    for (const span of before)
      expect(after.find((other) => other.spanId === span.spanId)).toMatchObject({
        name: span.name,
        traceId: span.traceId,
        parentSpanId: span.parentSpanId,
      });

    // The application's own spans, through the same provider, around and after the export.
    const ids = new LedgerIdGenerator();
    const { exporter, provider } = tracing(ids);
    const tracer = provider.getTracer("app");
    const outer = tracer.startSpan("app work");
    await toOtelSpans(store, "growing", provider, { ids });
    const later = tracer.startSpan("app work after");
    outer.end();
    later.end();
    await provider.forceFlush();
    const app = exporter.getFinishedSpans().filter((span) => span.name.startsWith("app"));
    expect(app).toHaveLength(2);
    const ledgerIds = new Set(after.flatMap((span) => [span.spanId, span.traceId]));
    for (const span of app) {
      expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(ledgerIds).not.toContain(span.spanContext().spanId);
      expect(ledgerIds).not.toContain(span.spanContext().traceId);
    }
    expect(app[0]?.spanContext().traceId).not.toBe(app[1]?.spanContext().traceId);
    await provider.shutdown();
  });

  it("refuses ids that are no LedgerIdGenerator, or one the provider does not use, with code and path", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const { exporter, provider } = tracing();
    await expect(
      toOtelSpans(store, fixture.sessionId, provider, {
        ids: { generateSpanId: () => "1", generateTraceId: () => "2" },
      } as unknown as ToOtelSpansOptions),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.options.ids" });
    const error = await toOtelSpans(store, fixture.sessionId, provider, {
      ids: new LedgerIdGenerator(),
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.options.ids" });
    expect((error as Error).message).toContain("idGenerator");
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    await provider.shutdown();
  });

  it("refuses an option it does not take, or options that are no object, before any span", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const { exporter, provider } = tracing();
    // Spans exported without the tool content asked for, without a word.
    const error = await toOtelSpans(store, fixture.sessionId, provider, {
      includeToolContents: true,
    } as ToOtelSpansOptions).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: "invalid-argument",
      path: "$.options.includeToolContents",
    });
    expect((error as Error).message).toMatch(
      /toOtelSpans has no option "includeToolContents" \(its options: scopeName, includeToolContent, includeMessages, ids\)/,
    );
    await expect(
      toOtelSpans(store, fixture.sessionId, provider, null as unknown as ToOtelSpansOptions),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.options" });
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    await provider.shutdown();
  });
});
