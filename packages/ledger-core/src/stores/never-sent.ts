import { ServerTimeoutError } from "./server-timeout.js";

/**
 * Socket error codes that only connecting gives: the server refused the connection, or its
 * name did not resolve. A statement goes out on a connection made, so none was sent.
 */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * True when `error` (or one of its causes) says the operation never got a connection to send
 * its statements on: refused or unresolvable at connect, or no connection made or free within
 * a bound (the store's own ServerTimeoutError for a connection, or what `driverConnectTimeout`
 * recognises as its driver's). The store then knows it wrote nothing (`nothingWritten`). A
 * wait for a reply, a dropped or reset connection, any other error: false, the outcome may be
 * unknown.
 */
export function neverSent(
  error: unknown,
  driverConnectTimeout: (error: Error) => boolean,
): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof ServerTimeoutError) return current.what === "connection";
    if (driverConnectTimeout(current)) return true;
    const { code } = current as { code?: unknown };
    if (typeof code === "string" && NOT_CONNECTED.has(code)) return true;
    current = current.cause;
  }
  return false;
}
