import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A PgBouncer in transaction mode in front of a PostgreSQL server, for one test file. */
export interface LocalPgbouncer {
  /** The server's URL with PgBouncer's host and port instead. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Why a local PgBouncer cannot start here (no `pgbouncer`: `bash scripts/install-pgbouncer.sh`
 * installs Debian's), or undefined. Under `CI=true` a missing binary is an error: the run must
 * fail, never skip.
 */
export async function localPgbouncerUnavailable(): Promise<string | undefined> {
  try {
    await run("pgbouncer", ["--version"]);
    return undefined;
  } catch (error) {
    const reason = `pgbouncer not found (${String(error)}); bash scripts/install-pgbouncer.sh installs it`;
    if (process.env.CI === "true")
      throw new Error(`CI=true and the PgBouncer test needs ${reason}`);
    console.warn(`[agent-ledger] skipping the PgBouncer test: ${reason}`);
    return reason;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts `pgbouncer` in the foreground, in transaction mode with `serverConnections` server
 * connections, on a free port, in front of the server `serverUrl` names. PgBouncer refuses to
 * run as root: as root it runs as the `postgres` user.
 */
export async function startLocalPgbouncer(
  serverUrl: string,
  serverConnections: number,
): Promise<LocalPgbouncer> {
  const server = new URL(serverUrl);
  const database = decodeURIComponent(server.pathname.slice(1));
  const user = decodeURIComponent(server.username);
  // The server's own password, if its URL has one (AGENT_LEDGER_POSTGRES_URL); clients of
  // PgBouncer itself are trusted.
  const password = server.password === "" ? "" : ` password=${decodeURIComponent(server.password)}`;
  const dir = mkdtempSync(join(tmpdir(), "agent-ledger-pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const config = join(dir, "pgbouncer.ini");
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    config,
    [
      "[databases]",
      `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${user}${password}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${serverConnections}`,
      "max_client_conn = 200",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = asRoot
    ? spawn(
        "setpriv",
        ["--reuid=postgres", "--regid=postgres", "--clear-groups", "pgbouncer", config],
        { stdio: ["ignore", "ignore", "pipe"] },
      )
    : spawn("pgbouncer", [config], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start on port ${port}: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(serverUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return { url: url.toString(), stop };
}
