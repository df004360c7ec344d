import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";

const run = promisify(execFile);

/** A Redis Cluster of three masters started from the machine's `redis-server` for one test file. */
export interface LocalCluster {
  nodes: { host: string; port: number }[];
  /** A new ioredis Cluster client on these nodes (the caller quits it). */
  client(): Cluster;
  stop(): Promise<void>;
}

/**
 * Why a local cluster cannot start here (no `redis-server` or `redis-cli`), or undefined. Under
 * `CI=true` a missing binary is an error: the run must fail, never skip.
 */
export async function localClusterUnavailable(): Promise<string | undefined> {
  for (const binary of ["redis-server", "redis-cli"]) {
    try {
      await run(binary, ["--version"]);
    } catch (error) {
      const reason = `${binary} not found (${String(error)})`;
      if (process.env.CI === "true")
        throw new Error(`CI=true and the Redis Cluster tests need ${reason}`);
      console.warn(`[agent-ledger] skipping Redis Cluster tests: ${reason}`);
      return reason;
    }
  }
  return undefined;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Three consecutive ports whose cluster bus ports (+10000) are free too. */
async function freePorts(): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 17_000 + Math.floor(Math.random() * 2_000) * 3;
    const ports = [base, base + 1, base + 2];
    const all = [...ports, ...ports.map((port) => port + 10_000)];
    if ((await Promise.all(all.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error("no free ports for a local Redis Cluster");
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`local Redis Cluster: ${what} not reached within ${timeoutMs} ms`);
}

async function nodeAnswer(port: number, ...command: string[]): Promise<string> {
  const client = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // A node still starting refuses the connection: connect() rejects and the caller polls again
  // (without a listener ioredis would also print the refusal as an unhandled error event).
  client.on("error", () => {});
  try {
    await client.connect();
    return String(await client.call(command[0] as string, ...command.slice(1)));
  } finally {
    client.disconnect();
  }
}

/**
 * The nodes as one string for a child process, `redis-cluster://host:port,host:port,...`: a
 * form only the test writers read (the store's own URLs name one server).
 */
export function clusterUrl(cluster: LocalCluster): string {
  return `redis-cluster://${cluster.nodes.map((node) => `${node.host}:${node.port}`).join(",")}`;
}

/** The client the tests and the writer processes use on a local cluster's nodes. */
function clusterClient(nodes: LocalCluster["nodes"]): Cluster {
  return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
}

/** A Cluster client on the nodes of a `clusterUrl`. */
export function clusterFromUrl(url: string): Cluster {
  return clusterClient(
    url
      .slice("redis-cluster://".length)
      .split(",")
      .map((node) => {
        const [host, port] = node.split(":");
        return { host: host as string, port: Number(port) };
      }),
  );
}

/**
 * `start` on free ports, tried again on other ports twice when it fails: two test files may
 * pick the same free ports at once (checked, then bound by another process).
 */
async function onFreePorts<T>(start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePorts());
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** Starts three cluster-enabled `redis-server` processes (nothing on disk) and joins them. */
export function startLocalCluster(): Promise<LocalCluster> {
  return onFreePorts(startCluster);
}

/**
 * `redis-server` processes on `ports` (nothing on disk, files in a directory of their own), with
 * `args` added; `stop` kills them and removes the directory. Each answers on its port when this
 * returns.
 */
async function startServers(
  ports: number[],
  args: (port: number) => string[],
): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "agent-ledger-redis-"));
  const processes: ChildProcess[] = ports.map((port) =>
    spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        ...args(port),
      ],
      { stdio: "ignore" },
    ),
  );
  // If the test process ends without stop() (a crash, an interrupted run), the servers go too.
  const killAll = () => {
    for (const child of processes) child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const stop = async () => {
    process.off("exit", killAll);
    killAll();
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) resolve();
            else child.once("exit", () => resolve());
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Answered by this process, not by another test file's server that took the port first
    // (this one then failed to bind, and the start is tried again on other ports).
    for (const [index, port] of ports.entries())
      await until(`node ${port} up`, async () =>
        (await nodeAnswer(port, "INFO", "server")).includes(
          `process_id:${processes[index]?.pid}\r\n`,
        ),
      );
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

/**
 * One `redis-server` with `args` added (say, `--maxmemory-policy allkeys-lru`), on a free port,
 * for a test that needs settings the shared server must not change under other tests.
 */
export function startLocalRedis(args: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  return onFreePorts(async ([port]) => {
    const { stop } = await startServers([port as number], () => args);
    return { url: `redis://127.0.0.1:${port}`, stop };
  });
}

async function startCluster(ports: number[]): Promise<LocalCluster> {
  const { stop } = await startServers(ports, (port) => [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    `nodes-${port}.conf`,
  ]);
  try {
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((port) => `127.0.0.1:${port}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (const port of ports)
      await until(`cluster state ok on ${port}`, async () =>
        (await nodeAnswer(port, "CLUSTER", "INFO")).includes("cluster_state:ok"),
      );
  } catch (error) {
    await stop();
    throw error;
  }
  const nodes = ports.map((port) => ({ host: "127.0.0.1", port }));
  return {
    nodes,
    client: () => clusterClient(nodes),
    stop,
  };
}
