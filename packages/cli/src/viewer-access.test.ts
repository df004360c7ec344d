import { hostname, networkInterfaces } from "node:os";
import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  recordDemoSession,
  recordNestedInFlight,
  runBin,
  startBin,
} from "./session-fixture.test.data.js";
import { CONTENT_SECURITY_POLICY } from "./viewer/security.js";
import { startViewer } from "./viewer/viewer-server.js";
import { MADE_AGAIN } from "./viewer.test.data.js";

const directory = scratchDirectory("agent-ledger-viewer-", { beforeAll, afterAll });
const storeUrl = `sqlite:${join(directory, "ledger.db")}`;

describe("agent-ledger serve: access rules", () => {
  it("refuses a non-loopback bind without a token, before opening the store", async () => {
    const result = await runBin([
      "--store",
      "sqlite:/nonexistent/ledger.db",
      "serve",
      "--host",
      "0.0.0.0",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("refusing to serve on 0.0.0.0 without --token");
  });

  it("with a token, answers only requests that carry it", async () => {
    const store = await openStore(storeUrl);
    await recordDemoSession(store, "token-session");
    await store.close();
    const server = await startBin(
      ["--store", storeUrl, "serve", "--host", "0.0.0.0", "--token", "s3cret-token-value"],
      /viewer on (http:\/\/\S+)\n/,
    );
    try {
      const printed = new URL(server.match[1] as string);
      expect(printed.searchParams.get("token")).toBe("s3cret-token-value");
      // Off loopback the token and the ledger cross the network as plain HTTP: said once.
      await expect
        .poll(() => server.errors())
        .toContain("agent-ledger: warning: serving on 0.0.0.0 over plain HTTP");
      const base = `http://127.0.0.1:${printed.port}`;
      // Every route that reads the ledger, the sessions with something open included.
      for (const path of ["/api/sessions", "/api/open-work", "/api/session?id=s"])
        expect((await fetch(`${base}${path}`)).status, path).toBe(401);
      expect((await fetch(`${base}/`)).status).toBe(401);
      expect((await fetch(`${base}/api/sessions?token=wrong-token-value`)).status).toBe(401);
      const ok = await fetch(`${base}/api/sessions`, {
        headers: { Authorization: "Bearer s3cret-token-value" },
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      const open = await fetch(`${base}/api/open-work`, {
        headers: { Authorization: "Bearer s3cret-token-value" },
      });
      expect(open.status).toBe(200);
      const page = await fetch(`${base}/?token=s3cret-token-value`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="app.js"></script>');
      const post = await fetch(`${base}/api/sessions?token=s3cret-token-value`, { method: "POST" });
      expect(post.status).toBe(405);
      // Meant to run until stopped: SIGTERM ends it as a success (the README's exit codes).
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      server.child.kill("SIGTERM");
    }
  });
});

describe("agent-ledger serve on every address of the machine", () => {
  it("prints URLs a colleague can open: the machine's name and its addresses, not 0.0.0.0", async () => {
    // It printed http://0.0.0.0:<port>/, which opens nothing on another machine.
    await (await openStore(storeUrl)).close();
    const server = await startBin(
      ["--store", storeUrl, "serve", "--host", "0.0.0.0", "--token", "s3cret-token-value"],
      /\(read-only; Ctrl-C to stop\)\n/,
    );
    try {
      const printed = server.output();
      expect(printed).not.toContain("0.0.0.0:");
      const first = new URL(
        (printed.match(/viewer on (http:\/\/\S+)\n/) as RegExpMatchArray)[1] as string,
      );
      expect(first.hostname).toBe(hostname());
      expect(first.searchParams.get("token")).toBe("s3cret-token-value");
      expect(printed).toContain(
        "bound to 0.0.0.0, every IPv4 address of this machine: a colleague opens the URL above, or one of these where that name does not resolve:",
      );
      const addresses = Object.values(networkInterfaces())
        .flat()
        .filter((each) => each !== undefined && each.family === "IPv4" && !each.internal);
      for (const each of addresses)
        expect(printed).toContain(
          `  http://${each?.address}:${first.port}/?token=s3cret-token-value\n`,
        );
      // The machine's own loopback opens it too, as before.
      const answer = await fetch(`http://127.0.0.1:${first.port}/api/sessions`, {
        headers: { Authorization: "Bearer s3cret-token-value" },
      });
      expect(answer.status).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
    }
  });
});

describe("agent-ledger serve: the store URL in the page", () => {
  it("names the store in resolve commands as inspect does: a credential as ***", async () => {
    const store = await openStore("memory:");
    // The agent call is made again by itself, and waits on the call inside it.
    const { inner } = await recordNestedInFlight(store, "in-flight", { outerEffect: MADE_AGAIN });
    const stepsFor = async (storeUrl: string) => {
      const viewer = await startViewer({ store, storeUrl });
      try {
        const response = await fetch(new URL("/api/sessions/in-flight", viewer.url));
        const text = await response.text();
        expect(text).not.toContain("s3cret");
        return (JSON.parse(text) as { nextSteps: unknown[] }).nextSteps;
      } finally {
        await viewer.close();
      }
    };
    const resolve = (store: string, passwordLeftOut = false) => [
      { action: "decide-inner-first" },
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" --store ${store} -- in-flight ${inner.attemptId}`,
        ...(passwordLeftOut ? { passwordLeftOut: true } : {}),
      },
    ];
    // The parser spells this path my%20ledger.db: the command must name the file given.
    expect(await stepsFor("sqlite:/tmp/my ledger.db")).toEqual(
      resolve("'sqlite:/tmp/my ledger.db'"),
    );
    // The page left such a URL out, while inspect showed it with its password as ***.
    expect(await stepsFor("postgres://app:s3cret@db/ledger")).toEqual(
      resolve("'postgres://app:***@db/ledger'", true),
    );
    expect(await stepsFor("redis://db:6379?password=s3cret&keyPrefix=al:")).toEqual(
      resolve("'redis://db:6379?password=***&keyPrefix=al:'", true),
    );
    await store.close();
  });

  it("shows the store's location in /api/config as the commands show a store URL", async () => {
    const memory = await openStore("memory:");
    const location = "postgres://app:s3cret@db/ledger?sslkey=/etc/s3cret.key&schema=agent";
    // A store whose description carries a credential (the stores' own leave it out).
    const store = new Proxy(memory, {
      get: (target, property) =>
        property === "describe"
          ? () => ({ kind: "postgres", location })
          : Reflect.get(target, property, target),
    });
    const viewer = await startViewer({ store });
    try {
      const response = await fetch(new URL("/api/config", viewer.url));
      expect(await response.json()).toEqual({
        store: {
          kind: "postgres",
          location: "postgres://app:***@db/ledger?sslkey=***&schema=agent",
        },
        pollMs: 1000,
      });
    } finally {
      await viewer.close();
      await memory.close();
    }
  });
});
