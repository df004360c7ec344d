import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ledgerMiddleware } from "@agent-ledger/ai-sdk";
import { type EventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { generateText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { alternate, median, type Row } from "./stats.js";

/** Steps per round; rounds alternate the three models (see `alternate`), after untimed ones. */
const PER_ROUND = 250;
const ROUNDS = 8;
/**
 * Untimed rounds of each first (1,000 steps each): with 50 warm-up steps the table compared a
 * still-compiling middleware with a warmer bare model (2.24x on the memory store, where a
 * process of its own measured 0-130 µs of overhead per step once warm).
 */
const WARMUP_ROUNDS = 4;

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

/** Microseconds per generateText step (one model call) over one round. */
async function roundOf(model: LanguageModelV3, first: number): Promise<number> {
  const start = performance.now();
  for (let index = first; index < first + PER_ROUND; index++)
    await generateText({
      model,
      system: "You are an order-support agent.",
      prompt: `Where is order ${index}?`,
      maxRetries: 0,
    });
  return ((performance.now() - start) * 1000) / PER_ROUND;
}

function withMiddleware(store: EventStore): LanguageModelV3 {
  const recorder = new SessionRecorder({
    store,
    sessionId: `bench-${Date.now()}`,
    actor: { type: "agent", id: "bench", framework: "ai-sdk" },
  });
  return wrapLanguageModel({ model: mockModel(), middleware: ledgerMiddleware({ recorder }) });
}

const round = (value: number) => Math.round(value * 10) / 10;

/**
 * Overhead of `ledgerMiddleware` per generateText step (model.requested committed before the
 * call, model.completed after) on the memory store and on SQLite (WAL, synchronous=FULL), against
 * the same call on the bare mock model.
 */
export async function benchAiSdkOverhead(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-ai-sdk-"));
  const store = await openStore(`sqlite:${join(dir, "ledger.db")}`);
  let results: number[][];
  try {
    const models = [mockModel(), withMiddleware(await openStore("memory:")), withMiddleware(store)];
    let first = 0;
    results = await alternate(
      models.map((model) => () => {
        first += PER_ROUND;
        return roundOf(model, first);
      }),
      { rounds: ROUNDS, warmup: WARMUP_ROUNDS },
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const [baseline, memory, sqlite] = results.map(median) as [number, number, number];
  const row = (name: string, value: number): Row => ({
    name,
    value: round(value),
    unit: "µs/step",
    baseline: round(baseline),
    ratio: Math.round((value / baseline) * 100) / 100,
    note: `median of ${ROUNDS} alternating rounds of ${PER_ROUND} after ${WARMUP_ROUNDS} untimed`,
  });
  return [
    { name: "ai-sdk generateText step, no middleware", value: round(baseline), unit: "µs/step" },
    row("ai-sdk generateText step + ledgerMiddleware (memory)", memory),
    row("ai-sdk generateText step + ledgerMiddleware (sqlite)", sqlite),
  ];
}
