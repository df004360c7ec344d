import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { openStore } from "../../store/open-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { freshPrefix } from "./testing/test-keys.js";

// rediss:// to a port where the server speaks plain Redis (the local one): the server reads the
// TLS ClientHello as the start of an inline command and waits for its end, so the handshake
// waited the whole connect bound (30 s by default) and failed as "connect ETIMEDOUT".

const available = await serverAvailable("redis");
const prefix = freshPrefix("tls");

/** What `openStore(url)` rejects with, and after how many ms. */
async function refusal(url: string): Promise<{ error: LedgerError; ms: number }> {
  const started = Date.now();
  const error = await openStore(url).then(
    async (store) => {
      await store.close();
      throw new Error(`${url} opened`);
    },
    (failure: LedgerError) => failure,
  );
  return { error, ms: Date.now() - started };
}

describe.skipIf(!available)("a rediss:// URL to a server without TLS", () => {
  it("fails in a few seconds with invalid-argument at $.url saying the TLS handshake failed, without the password", async () => {
    const url = new URL(SERVER_URLS.redis);
    url.protocol = "rediss:";
    url.password = "s3cret-pw";
    url.searchParams.set("keyPrefix", prefix);
    const { error, ms } = await refusal(url.toString());
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.url" });
    expect(error.message).toMatch(
      new RegExp(
        `^\\$\\.url: the server at .* takes no TLS there \\(TLS handshake with ${url.hostname}:${url.port || 6379} failed: the server answers plain Redis there \\(it does not speak TLS on that port\\)`,
      ),
    );
    expect(ms).toBeLessThan(5_000);
    expect(`${error.message} ${String((error.cause as Error | undefined)?.message)}`).not.toContain(
      "s3cret",
    );
  }, 60_000);
});

describe("a rediss:// URL to a TLS server slow to answer the handshake", () => {
  // It answers plain text as a TLS server does (an alert: unexpected_message, then it closes),
  // and the ClientHello never: the handshake is waited for until the connect bound, as before.
  let slow: Server;
  const held: Socket[] = [];
  let alerts = 0;
  const TLS_ALERT = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a]);
  beforeAll(async () => {
    slow = createServer((socket) => {
      held.push(socket);
      socket.once("data", (data) => {
        if (data[0] === 0x16) return; // a TLS handshake record
        alerts += 1;
        socket.end(TLS_ALERT);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => slow.close(resolve));
  });

  it("is not taken for a server without TLS: it fails at the connect bound, as before", async () => {
    const { port } = slow.address() as { port: number };
    const { error, ms } = await refusal(
      `rediss://127.0.0.1:${port}?timeoutMs=2500&keyPrefix=${encodeURIComponent(prefix)}`,
    );
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect(error.message).toContain("connect ETIMEDOUT");
    expect(error.message).not.toContain("TLS handshake");
    expect(ms).toBeGreaterThanOrEqual(2_400);
    // The store asked on a plain connection, and was answered as a TLS server answers.
    expect(alerts).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
