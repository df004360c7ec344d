import { createServer } from "node:net";
import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin, startBin } from "./session-fixture.test.data.js";

// What serve cannot do is said before it waits: a port that is no number, an address it cannot
// listen on (a usage error, exit 2, not 4, which says the store did not answer), and a
// --session the store does not hold.

describe("agent-ledger serve, told what it cannot do", () => {
  const file = join(
    scratchDirectory("agent-ledger-serve-args-", { beforeAll, afterAll }),
    "ledger.db",
  );
  const store = `sqlite:${file}`;

  beforeAll(async () => {
    const ledger = await openStore(store);
    await new SessionRecorder({
      store: ledger,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    }).startRun();
    await ledger.close();
  });

  it("refuses --port given as no whole number, an empty one too", async () => {
    for (const port of ["", " ", "80.5", "0x50"]) {
      const result = await runBin(["--store", store, "serve", "--port", port]);
      expect(result.code, JSON.stringify(port)).toBe(2);
      expect(result.stderr).toContain("--port");
    }
  });

  it("refuses a token under 8 characters, naming where it came from (--token or the environment)", async () => {
    const given = await runBin(["--store", store, "serve", "--token", "short"]);
    expect(given.code, given.stderr).toBe(2);
    expect(given.stderr).toContain("--token must be at least 8 characters");
    const fromEnv = await runBin(["--store", store, "serve"], {
      AGENT_LEDGER_VIEWER_TOKEN: "short",
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(2);
    expect(fromEnv.stderr).toContain("$AGENT_LEDGER_VIEWER_TOKEN must be at least 8 characters");
  });

  it("exits 2 naming the address when it cannot listen there", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as { port: number };
    try {
      const inUse = await runBin(["--store", store, "serve", "--port", String(port)]);
      expect(inUse.code, inUse.stderr).toBe(2);
      expect(inUse.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
    const unknown = await runBin([
      "--store",
      store,
      "serve",
      "--host",
      "999.1.1.1",
      "--token",
      "s3cret-token",
    ]);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("cannot listen on 999.1.1.1");
  });

  it("warns when --session names a session the store does not hold (yet)", async () => {
    const server = await startBin(
      ["--store", store, "serve", "--session", "nosuch"],
      /session: (\S+)/,
    );
    try {
      await expect.poll(() => server.errors()).toContain('no session "nosuch"');
    } finally {
      server.child.kill("SIGTERM");
    }
  });
});
