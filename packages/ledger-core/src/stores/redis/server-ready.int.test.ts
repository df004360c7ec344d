import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openStore } from "../../store/open-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("a Redis user the server refuses INFO", () => {
  const prefix = freshPrefix("ready");
  const user = `no-info-${randomUUID()}`;

  afterAll(async () => {
    const admin = new Redis(url);
    await admin.call("ACL", "DELUSER", user);
    admin.disconnect();
    await deleteKeys(url, prefix);
  });

  it("opens and reads a ledger with a reader's rights, printing nothing (ioredis warned on stderr)", async () => {
    const writer = await openStore(`${url}?keyPrefix=${encodeURIComponent(prefix)}`);
    await writer.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    await writer.close();
    const admin = new Redis(url);
    // A reader's rights, without +info.
    await admin.call(
      "ACL",
      "SETUSER",
      user,
      "on",
      ">reader-pw",
      `~${prefix}*`,
      "+@read",
      "+@connection",
      "+evalsha",
      "+eval",
    );
    admin.disconnect();
    const reader = new URL(url);
    reader.username = user;
    reader.password = "reader-pw";
    reader.searchParams.set("keyPrefix", prefix);
    const warn = vi.spyOn(console, "warn");
    try {
      const store = await openStore(reader.toString(), { create: false });
      expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toHaveLength(1);
      await store.close();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
