/**
 * mysql2's words for a connection not made within the connectTimeout of a pool the store made
 * (`connectTimeoutMs`, whose bound it names); undefined for any other error. Other waits are
 * bounded by the store itself (bounded.ts: a ServerTimeoutError).
 */
export function driverTimeout(
  error: Error,
  connectTimeoutMs: number | undefined,
): string | undefined {
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (code === "ETIMEDOUT" && syscall === "connect" && connectTimeoutMs !== undefined)
    return `no connection to the server within ${connectTimeoutMs} ms (${error.message})`;
  return undefined;
}

/** mysql2's error for a connection not made within its connectTimeout. */
export function driverConnectTimeout(error: Error): boolean {
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return code === "ETIMEDOUT" && syscall === "connect";
}
