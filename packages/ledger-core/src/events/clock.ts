let lastMs = Number.NaN;
let lastIso = "";

/**
 * The current time as an ISO 8601 string (millisecond precision, as `toISOString` gives it).
 * Calls within one millisecond share one string: formatting a Date took about 450 ns, a tenth
 * of a memory-store append, and every append reads the clock once.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
