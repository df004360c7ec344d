import { createServer, type Socket, connect as tcpConnect } from "node:net";

/**
 * How the proxy treats bytes: `open` passes them; `silent` drops them both ways and closes
 * nothing (a network partition, a firewall dropping packets: the black hole); `replies-lost`
 * passes what the client sends and drops what the server answers (a statement that ran, whose
 * reply never came).
 */
export type ProxyMode = "open" | "silent" | "replies-lost";

/** A TCP proxy in the test's process in front of a server, which can stop passing bytes. */
export interface BlackHoleProxy {
  port: number;
  /** `serverUrl` with the proxy's host and port instead. */
  url(serverUrl: string): string;
  setMode(mode: ProxyMode): void;
  /** Connections the proxy has accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/** Starts a proxy on a free port in front of `host:port`. */
export function startBlackHoleProxy(target: {
  host: string;
  port: number;
}): Promise<BlackHoleProxy> {
  let mode: ProxyMode = "open";
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    accepted++;
    const upstream = tcpConnect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("data", (bytes) => {
      if (mode !== "silent") upstream.write(bytes);
    });
    upstream.on("data", (bytes) => {
      if (mode === "open") client.write(bytes);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      resolve({
        port,
        url(serverUrl) {
          const url = new URL(serverUrl);
          url.hostname = "127.0.0.1";
          url.port = String(port);
          return url.toString();
        },
        setMode(next) {
          mode = next;
        },
        accepted: () => accepted,
        close() {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

/** `host` and `port` of a server URL, with the scheme's default port. */
export function serverAddress(
  serverUrl: string,
  defaultPort: number,
): { host: string; port: number } {
  const url = new URL(serverUrl);
  return {
    host: url.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1",
    port: Number(url.port || defaultPort),
  };
}
