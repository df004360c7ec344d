import { connect } from "node:net";

/** Server URLs the integration tests use; each can be overridden by environment. */
export const SERVER_URLS = {
  postgres: process.env.AGENT_LEDGER_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  mysql: process.env.AGENT_LEDGER_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test",
  redis: process.env.AGENT_LEDGER_REDIS_URL ?? "redis://127.0.0.1:6379",
} as const;

export type ServerKind = keyof typeof SERVER_URLS;

const defaultPorts: Record<ServerKind, number> = { postgres: 5432, mysql: 3306, redis: 6379 };

function reachable(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(timeoutMs, () =>
      done(`no answer from ${host}:${port} within ${timeoutMs} ms`),
    );
    socket.once("connect", () => done(undefined));
    socket.once("error", (error) => done(`${host}:${port} unreachable: ${error.message}`));
  });
}

/**
 * Whether the integration tests of a server kind can run. Under `CI=true` an unreachable
 * server is an error (the run must fail, never skip); elsewhere the reason is printed and the
 * caller skips (`describe.skipIf(!available)`).
 */
export async function serverAvailable(
  kind: ServerKind,
  url: string = SERVER_URLS[kind],
): Promise<boolean> {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1";
  const port = Number(parsed.port || defaultPorts[kind]);
  const reason = await reachable(host, port, 2000);
  if (reason === undefined) return true;
  if (process.env.CI === "true") {
    throw new Error(
      `CI=true and the ${kind} server is required: ${reason} (${kind} URL from AGENT_LEDGER_${kind.toUpperCase()}_URL)`,
    );
  }
  console.warn(`[agent-ledger] skipping ${kind} integration tests: ${reason}`);
  return false;
}
