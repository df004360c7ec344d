import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ledgerMiddleware } from "@agent-ledger/ai-sdk";
import { type EventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { generateText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { Row } from "./stats.js";

const WARMUP = 50;
const ITERATIONS = 300;

const answer: LanguageModelV3GenerateResult = {
  content: [{ type: "text", text: "The order shipped yesterday with DHL." }],
  finishReason: { unified: "stop", raw: "stop" },
  usage: {
    inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 9, text: 9, reasoning: undefined },
  },
  warnings: [],
  response: { id: "resp-1", modelId: "bench", timestamp: new Date(1_700_000_000_000) },
};

function mockModel(): LanguageModelV3 {
  return new MockLanguageModelV3({
    provider: "bench",
    modelId: "bench",
    doGenerate: async () => answer,
  });
}

/** Microseconds per generateText step (one model call), after a warm-up. */
async function measure(model: () => LanguageModelV3): Promise<number> {
  const step = (index: number) =>
    generateText({
      model: model(),
      system: "You are an order-support agent.",
      prompt: `Where is order ${index}?`,
      maxRetries: 0,
    });
  for (let index = 0; index < WARMUP; index++) await step(index);
  const start = performance.now();
  for (let index = 0; index < ITERATIONS; index++) await step(index);
  return ((performance.now() - start) * 1000) / ITERATIONS;
}

async function withMiddleware(store: EventStore): Promise<number> {
  const base = mockModel();
  const recorder = new SessionRecorder({
    store,
    sessionId: `bench-${Date.now()}`,
    actor: { type: "agent", id: "bench", framework: "ai-sdk" },
  });
  const model = wrapLanguageModel({ model: base, middleware: ledgerMiddleware({ recorder }) });
  return measure(() => model);
}

const round = (value: number) => Math.round(value * 10) / 10;

/**
 * Overhead of `ledgerMiddleware` per generateText step (model.requested committed before the
 * call, model.completed after) on the memory store and on SQLite (WAL, synchronous=FULL), against
 * the same call on the bare mock model.
 */
export async function benchAiSdkOverhead(): Promise<Row[]> {
  const bare = mockModel();
  const baseline = await measure(() => bare);
  const memory = await withMiddleware(await openStore("memory:"));
  const dir = mkdtempSync(join(tmpdir(), "bench-ai-sdk-"));
  let sqlite: number;
  const store = await openStore(`sqlite:${join(dir, "ledger.db")}`);
  try {
    sqlite = await withMiddleware(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const row = (name: string, value: number): Row => ({
    name,
    value: round(value),
    unit: "µs/step",
    baseline: round(baseline),
    ratio: Math.round((value / baseline) * 100) / 100,
  });
  return [
    { name: "ai-sdk generateText step, no middleware", value: round(baseline), unit: "µs/step" },
    row("ai-sdk generateText step + ledgerMiddleware (memory)", memory),
    row("ai-sdk generateText step + ledgerMiddleware (sqlite)", sqlite),
  ];
}
