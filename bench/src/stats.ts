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
