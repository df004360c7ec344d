/** One line of the bench table. */
export interface Row {
  name: string;
  value: number;
  unit: string;
  /** The same measure for the baseline, in the same unit, measured in the same run. */
  baseline?: number;
  baselineName?: string;
  /** ours / baseline for times; for rates, as stated in `note`. */
  ratio?: number;
  note?: string;
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Median of a few numbers (the upper one of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Runs `fn` `count` times after `warmup` runs; returns each run's duration in µs. */
export async function sample(
  count: number,
  warmup: number,
  fn: (index: number) => unknown,
): Promise<number[]> {
  for (let index = 0; index < warmup; index++) await fn(-1 - index);
  const samples: number[] = [];
  for (let index = 0; index < count; index++) {
    const start = process.hrtime.bigint();
    await fn(index);
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return samples;
}

/**
 * Runs every measure once per round, after `warmup` untimed rounds, and returns each measure's
 * results in round order. The order reverses every round (A B, B A, A B, ...): on these VMs a
 * process keeps getting faster for its first few thousand writes (the raw driver's CPU per
 * write falls about 5x as well), so a measure that always ran first would pay for that drift.
 */
export async function alternate<T>(
  measures: (() => Promise<T>)[],
  options: { rounds: number; warmup: number },
): Promise<T[][]> {
  const results: T[][] = measures.map(() => []);
  for (let round = 0; round < options.warmup + options.rounds; round++) {
    const order = measures.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const result = await (measures[index] as () => Promise<T>)();
      if (round >= options.warmup) (results[index] as T[]).push(result);
    }
  }
  return results;
}

/**
 * Latency of each call, in µs, over rounds taken in turns (`alternate`): 20 rounds of 75 calls
 * of each, after 40 untimed rounds (3,000 calls of each). A fresh process runs several times
 * slower for its first few thousand calls (see server-bench.ts), and with fewer, shorter
 * rounds a transient state of the machine moved a run's p50 by as much as a change measured.
 */
export async function latencyInTurns(calls: (() => unknown)[]): Promise<number[][]> {
  const rounds = await alternate(
    calls.map((call) => () => sample(75, 0, call)),
    { rounds: 20, warmup: 40 },
  );
  return rounds.map((samples) => samples.flat());
}

/** Events per second of `fn`, which writes `count` events. */
export async function perSecond(count: number, fn: () => unknown): Promise<number> {
  return count / ((await timeMs(fn)) / 1000);
}

/** Wall time of `fn` in ms. */
export async function timeMs(fn: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Prints rows as a Markdown table (pasteable into an issue note). */
export function printTable(title: string, rows: Row[]): void {
  console.log(`\n### ${title}\n`);
  console.log("| measure | ours | baseline (same run) | ratio | note |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) {
    const ours = `${round(row.value)} ${row.unit}`;
    const base =
      row.baseline === undefined
        ? ""
        : `${round(row.baseline)} ${row.unit}${row.baselineName ? ` (${row.baselineName})` : ""}`;
    const ratio = row.ratio === undefined ? "" : `${round(row.ratio, 3)}x`;
    console.log(`| ${row.name} | ${ours} | ${base} | ${ratio} | ${row.note ?? ""} |`);
  }
}
