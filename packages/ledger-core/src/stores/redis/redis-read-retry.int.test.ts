import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");
const actor = { type: "agent", id: "a" } as const;

// The server held busy from another connection (DEBUG SLEEP is disabled on this machine's
// Redis, see redis-fault.int.test.ts): a script that spins on TIME for ARGV[1] ms.
const BUSY_SCRIPT = `
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
for _ = 1, 100000000 do
  local now = redis.call('TIME')
  if (now[1] * 1000000 + now[2]) - start > tonumber(ARGV[1]) * 1000 then break end
end
return 1`;

/** Holds this process's event loop for `ms` without yielding to it. */
function holdEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe.skipIf(!available)("RedisEventStore reads after the server closed its connection", () => {
  const prefix = freshPrefix("readretry");
  const name = `ledger-read-retry-${randomBytes(4).toString("hex")}`;
  /** A store on a client of its own, whose connection carries `name`. */
  const namedStore = (timeoutMs?: number) => {
    const named = new URL(url);
    named.searchParams.set("connectionName", name);
    return new RedisEventStore({
      url: named.toString(),
      keyPrefix: prefix,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  };
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(url);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    admin?.disconnect();
    await deleteKeys(url, prefix);
  });

  /**
   * `read`, sent right after the server closed the store's connection (CLIENT KILL, as an
   * operator or a failover does) and before the store's client has read a byte of it: a
   * resume that lands right then. The KILL goes out, the event loop is held while the server
   * carries it out, and `read` is called as the hold ends, so its command goes out on a
   * connection the server already closed.
   */
  async function readRightAfterKill<T>(read: () => Promise<T>): Promise<T> {
    const list = (await admin.client("LIST")) as string;
    const id = list
      .split("\n")
      .find((entry) => entry.includes(` name=${name} `))
      ?.match(/^id=(\d+) /)?.[1];
    expect(id).toBeDefined();
    const kill = admin.client("KILL", "ID", id as string);
    holdEventLoop(200);
    const reading = read().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    expect(await kill).toBe(1);
    const outcome = await reading;
    if ("error" in outcome) throw outcome.error;
    return outcome.value;
  }

  it("a resume right after sends its reads again on a new connection, and resumes", async () => {
    const store = namedStore();
    await store.init();
    const sessionId = uuidv7();
    const recorder = new SessionRecorder({ store, sessionId, runId: "r", actor });
    await recorder.startRun();
    await recorder.modelCompleted(await recorder.beforeModelCall({ request: { n: 1 } }), {
      ok: true,
    });
    const resumed = await readRightAfterKill(() =>
      SessionRecorder.resume({ store, sessionId, runId: "r", actor }),
    );
    expect(resumed.resumed).toBe(true);
    expect(resumed.length).toBe(3);

    // Each read of the store, the same way.
    const ref = await store.putBlob("kept");
    const reads: Record<string, () => Promise<unknown>> = {
      readRun: () => store.readRun({ sessionId, runId: "r" }),
      readSession: () => store.readSession({ sessionId }),
      listRuns: () => store.listRuns(sessionId),
      listSessions: () => store.listSessions({ limit: 10 }),
      runHead: () => store.runHead({ sessionId, runId: "r" }),
      getBlob: () => store.getBlob(ref),
      getBlobs: () => store.getBlobs([ref]),
    };
    for (const [operation, read] of Object.entries(reads))
      await expect(readRightAfterKill(read), operation).resolves.toBeDefined();
    await store.close();
  });

  it("a command the server refuses, or a wait past the store's bound, is not sent again", async () => {
    const store = namedStore(300);
    await store.init();
    const sessionId = uuidv7();
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    const sent = vi.spyOn(Redis.prototype, "lrange");

    // Another application wrote the session's log as a string: every read of it is refused.
    const log = sessionKeys(prefix, sessionId).log;
    await admin.set(log, "not a list");
    const refused = await store.readSession({ sessionId }).catch((error: unknown) => error);
    expect(LedgerError.isInstance(refused, "store-unavailable")).toBe(true);
    expect((refused as Error).message).toContain("WRONGTYPE");
    expect(sent.mock.calls.filter(([key]) => key === log)).toHaveLength(1);

    // The server busy past the bound: the store's client drops the connection (socketTimeout).
    await admin.del(log);
    sent.mockClear();
    const blocker = new Redis(url);
    const busy = blocker.eval(BUSY_SCRIPT, 0, 900);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await store.readSession({ sessionId }).catch((error: unknown) => error);
    await busy;
    blocker.disconnect();
    expect(LedgerError.isInstance(late, "store-unavailable")).toBe(true);
    expect((late as Error).message).toContain("within 300 ms");
    expect(sent.mock.calls.filter(([key]) => key === log)).toHaveLength(1);
    await store.close();
  });
});
