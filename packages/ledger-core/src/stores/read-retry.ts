/**
 * The waits before a read is sent again after it lost its connection: three sends in all. The
 * first lets the driver read the server's word on the other connections it ended at the same
 * time (a pool hands out an idle connection the server ended until then) and lets Redis' client
 * reconnect (50 ms after a drop); the second covers a server that ended them all at once (a
 * failover) and is taking new ones again.
 */
/**
 * The socket errors that say a connection was reset or broken under a call, whatever the
 * driver: one list for every store's lostConnection.
 */
export const BROKEN_SOCKET_CODES: ReadonlySet<unknown> = new Set(["ECONNRESET", "EPIPE"]);

export const READ_RETRY_DELAYS_MS: readonly number[] = [25, 150];

/**
 * Runs `read`, again while it fails because its connection was lost (`lostConnection`: the
 * server ended it (a failover, pg_terminate_backend, CLIENT KILL, KILL CONNECTION) or it was
 * reset), at most READ_RETRY_DELAYS_MS.length more times. A read changes nothing, so it is
 * always safe to send again, and on a new connection it most likely succeeds: a recorder's
 * resume that lands right after the server ended the store's connections no longer fails for
 * a connection that was gone before it started. Writes never come here: a lost connection
 * leaves their outcome unknown, which their caller must hear of.
 *
 * Never after any other failure: a statement the server refused fails the same way again, a
 * wait that passed a bound (the store's `timeoutMs`, a driver's or server's timeout) would be
 * waited for again, and a connection that cannot be made is the caller's to wait for. Nor once
 * the store's close() was called (`closing`): close() waits for the operations under way.
 * Every store's reads go through this one function; what a lost connection looks like (its
 * driver's errors) is each store's own.
 */
export async function retryRead<T>(options: {
  read: () => Promise<T>;
  lostConnection: (error: unknown) => boolean;
  closing: () => boolean;
}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await options.read();
    } catch (error) {
      const delay = READ_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || options.closing() || !options.lostConnection(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      // close() may have been called during the wait.
      if (options.closing()) throw error;
    }
  }
}
