import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  readRightAfter,
  readsSucceedAfterKill,
  refusedOrLateSentOnce,
} from "../sql/testing/read-retry-scenario.js";
import { sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { BUSY_SCRIPT } from "./testing/busy-server.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

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
   * `read`, sent right after the server closed the store's connection (CLIENT KILL) and before
   * the store's client has read a byte of it (`readRightAfter`).
   */
  async function readRightAfterKill<T>(read: () => Promise<T>): Promise<T> {
    const list = (await admin.client("LIST")) as string;
    const id = list
      .split("\n")
      .find((entry) => entry.includes(` name=${name} `))
      ?.match(/^id=(\d+) /)?.[1];
    expect(id).toBeDefined();
    const kill = admin.client("KILL", "ID", id as string).then((killed) => expect(killed).toBe(1));
    return readRightAfter(kill, read);
  }

  it("a resume right after sends its reads again on a new connection, and resumes", async () => {
    await readsSucceedAfterKill(namedStore(), readRightAfterKill);
  });

  it("a command the server refuses, or a wait past the store's bound, is not sent again", async () => {
    const store = namedStore(300);
    const sessionId = uuidv7();
    const log = sessionKeys(prefix, sessionId).log;
    const sent = vi.spyOn(Redis.prototype, "lrange");
    const blocker = new Redis(url);
    let busy: Promise<unknown> | undefined;
    await refusedOrLateSentOnce({
      store,
      timeoutMs: 300,
      sessionId,
      sends: {
        reset: () => sent.mockClear(),
        count: () => sent.mock.calls.filter(([key]) => key === log).length,
      },
      // Another application wrote the session's log as a string: every read of it is refused.
      refuse: async () => {
        await admin.set(log, "not a list");
      },
      refusedBy: (error) => expect((error as Error).message).toContain("WRONGTYPE"),
      // The server busy past the bound: the store's client drops the connection (socketTimeout).
      holdPastBound: async () => {
        await admin.del(log);
        busy = blocker.eval(BUSY_SCRIPT, 0, 900);
        await new Promise((resolve) => setTimeout(resolve, 50));
      },
      release: async () => {
        await busy;
        blocker.disconnect();
      },
      reads: {
        refused: () => store.readSession({ sessionId }),
        late: () => store.readSession({ sessionId }),
      },
    });
    await store.close();
  });
});
