import { randomBytes } from "node:crypto";
import { sha256Hex } from "../events/canonical.js";

/**
 * `length` hex digits of sha256 over `parts`; never all zeros, which OpenTelemetry takes for
 * an invalid id.
 */
export function derivedOtelId(length: 16 | 32, parts: readonly string[]): string {
  const hex = sha256Hex(JSON.stringify(parts)).slice(0, length);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/** The ids the next span started through a generator is to take. */
interface NextIds {
  traceId: string | undefined;
  spanId: string | undefined;
}

// Kept beside the class, not on it: what the next span takes is toOtelSpans' business, not
// part of the generator's public surface.
const pending = new WeakMap<LedgerIdGenerator, NextIds>();

function randomHex(bytes: number): string {
  let hex = randomBytes(bytes).toString("hex");
  while (/^0+$/.test(hex)) hex = randomBytes(bytes).toString("hex");
  return hex;
}

/**
 * An OpenTelemetry `IdGenerator` (the SDK's tracer provider takes it as `idGenerator`) through
 * which `toOtelSpans(store, sessionId, provider, { ids })` gives its spans ids derived from the
 * ledger instead of random ones: a run's span from (session, run), an attempt's from (session,
 * run, attempt), a root run's trace from (session, run). Exporting a session again gives the
 * same ids, so a backend that imports both exports sees one trace, not two, and a span keeps
 * its id while its session grows. Spans that other code starts through the same provider get
 * random ids, as from the SDK's own generator.
 */
export class LedgerIdGenerator {
  generateTraceId(): string {
    return takeId(this, "traceId", 16);
  }

  generateSpanId(): string {
    return takeId(this, "spanId", 8);
  }
}

/** The id set for the next span, once; else a random one of `bytes` bytes. */
function takeId(generator: LedgerIdGenerator, kind: keyof NextIds, bytes: number): string {
  const next = pending.get(generator);
  const id = next?.[kind];
  if (next === undefined || id === undefined) return randomHex(bytes);
  next[kind] = undefined;
  return id;
}

/**
 * Runs `start` (which starts one span, synchronously) with `ids` as the ids the generator
 * hands out meanwhile; nothing is left for a later span, whether `start` took them or not.
 */
export function withNextIds<T>(
  generator: LedgerIdGenerator,
  ids: { traceId?: string; spanId: string },
  start: () => T,
): T {
  pending.set(generator, { traceId: ids.traceId, spanId: ids.spanId });
  try {
    return start();
  } finally {
    pending.delete(generator);
  }
}
