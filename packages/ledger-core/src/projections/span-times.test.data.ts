/** A span's time (`[seconds, nanoseconds]`) in whole milliseconds, as the ledger records times. */
export function ms(time: [number, number]): number {
  return time[0] * 1000 + Math.round(time[1] / 1e6);
}
