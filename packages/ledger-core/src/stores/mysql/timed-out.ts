import { ServerTimeoutError } from "../server-timeout.js";

/**
 * What the store says of a wait that passed a bound, and the error it passed with (the store
 * error's `cause`), or undefined when `error` is no timeout: the store's own (bounded.ts), or
 * mysql2's connectTimeout of a pool the store made (`connectTimeoutMs`, whose bound it names).
 */
export function timedOut(
  error: unknown,
  connectTimeoutMs: number | undefined,
): { message: string; error: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof ServerTimeoutError) return { message: current.message, error: current };
    const { code, syscall } = current as { code?: unknown; syscall?: unknown };
    if (code === "ETIMEDOUT" && syscall === "connect" && connectTimeoutMs !== undefined)
      return {
        message: `no connection to the server within ${connectTimeoutMs} ms (${current.message})`,
        error: current,
      };
    current = current.cause;
  }
  return undefined;
}
