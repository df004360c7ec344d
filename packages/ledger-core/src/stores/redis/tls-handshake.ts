import { connect } from "node:net";
import type { Redis } from "ioredis";

/** How long a TLS handshake goes unanswered before the store asks if the server speaks plain Redis. */
const PROBE_AFTER_MS = 1000;
/** How long the store waits for the plain server's answer. */
const PROBE_BOUND_MS = 2000;

/** The name of the error a handshake with a server without TLS fails with (`unavailable` says it). */
export const PLAIN_SERVER_ERROR = "TlsHandshakeError";

/**
 * Fails, as soon as it is known, the TLS handshake of a client the store made for a `rediss://`
 * URL with a server that speaks plain Redis on that port. Such a server reads the ClientHello as
 * the start of an inline command and waits for its end: nothing answers, and the handshake
 * waited the whole connect bound (30 s by default) to fail as "connect ETIMEDOUT". When a
 * handshake is not done after a second (half the connect bound if that is shorter), a plain
 * connection sends PING: a server that answers it as Redis does (`+PONG`, `-NOAUTH ...`) speaks
 * no TLS there, and the handshake's socket is destroyed with an error that says so (the host and
 * port only, no password). A TLS server never answers plain text as Redis does: a slow one is
 * waited for as before, and a silent port fails at the connect bound.
 */
export function failPlainServerHandshakes(client: Redis): void {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => clearTimeout(timer);
  client.on("connecting", () => {
    stop();
    const bound = client.options.connectTimeout;
    const after = bound ? Math.min(PROBE_AFTER_MS, bound / 2) : PROBE_AFTER_MS;
    timer = setTimeout(() => void probe(client), after);
    timer.unref();
  });
  for (const event of ["connect", "close", "end"]) client.on(event, stop);
}

async function probe(client: Redis): Promise<void> {
  const stream = client.stream;
  if (client.status !== "connecting" || stream === undefined) return;
  const host = client.options.host ?? "127.0.0.1";
  const port = client.options.port ?? 6379;
  if (!(await answersPlainRedis({ host, port, family: client.options.family }))) return;
  if (client.status !== "connecting" || client.stream !== stream || stream.destroyed) return;
  const error = new Error(
    `TLS handshake with ${host}:${port} failed: the server answers plain Redis there (it does not speak TLS on that port): use redis://, or the port where the server takes TLS`,
  );
  error.name = PLAIN_SERVER_ERROR;
  stream.destroy(error);
}

/** Whether the server at host:port answers a plain-text PING as Redis does (`+` or `-`). */
function answersPlainRedis(address: {
  host: string;
  port: number;
  family?: number;
}): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(address);
    const done = (plain: boolean) => {
      socket.destroy();
      resolve(plain);
    };
    socket.setTimeout(PROBE_BOUND_MS, () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data: Buffer) => done(data[0] === 0x2b || data[0] === 0x2d));
    socket.once("error", () => done(false));
    socket.once("close", () => done(false));
  });
}
