import { vi } from "vitest";

/**
 * Runs `write` with the clock turned back `agoMs` (and going on from there), for a ledger whose
 * sessions are that old without waiting: the stores stamp an event with `Date.now()`, and prune
 * refuses a cutoff within the last minute. Only `Date` is faked; timers run as they do.
 */
export async function recordedEarlier<T>(agoMs: number, write: () => Promise<T>): Promise<T> {
  const then = Date.now() - agoMs;
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
  vi.setSystemTime(then);
  try {
    return await write();
  } finally {
    vi.useRealTimers();
  }
}
