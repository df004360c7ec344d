import { statSync } from "node:fs";
import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  openStore,
  resolveEvents,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "./chromium.test.data.js";
import {
  type DemoSession,
  INJECTION,
  recordDemoSession,
  recordNestedInFlight,
  runBin,
  runPasted,
  startBin,
} from "./session-fixture.test.data.js";
import { CONTENT_SECURITY_POLICY } from "./viewer/security.js";
import { startViewer } from "./viewer/viewer-server.js";

/** An agent call's effect that the next resume makes again by itself. */
const MADE_AGAIN = { kind: "none", idempotent: true } as const;

const directory = scratchDirectory("agent-ledger-viewer-", afterAll);
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
      expect((await fetch(`${base}/api/sessions`)).status).toBe(401);
      expect((await fetch(`${base}/`)).status).toBe(401);
      expect((await fetch(`${base}/api/sessions?token=wrong-token-value`)).status).toBe(401);
      const ok = await fetch(`${base}/api/sessions`, {
        headers: { Authorization: "Bearer s3cret-token-value" },
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
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

describe.skipIf(!haveChromium)("agent-ledger serve in Chromium", () => {
  let store: EventStore;
  let demo: DemoSession;
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startBin>>;
  let sessionUrl: string;

  /** A recorder on a new run of `sessionId` in the viewer's store, its run started. */
  async function startedRun(sessionId: string, runId: string, agent: string) {
    const recorder = new SessionRecorder({
      store,
      sessionId,
      runId,
      actor: { type: "agent", id: agent },
    });
    await recorder.startRun();
    return recorder;
  }

  beforeAll(async () => {
    store = await openStore(storeUrl);
    demo = await recordDemoSession(store, "viewer-session");
    server = await startBin(
      ["--store", storeUrl, "serve", "--poll-ms", "200", "--session", demo.sessionId],
      /session: (http:\/\/\S+)\n/,
    );
    sessionUrl = server.match[1] as string;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    server?.child.kill("SIGTERM");
    await store?.close();
  });

  it("binds 127.0.0.1 on a free port and sends a strict CSP", async () => {
    expect(sessionUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#\/session\/viewer-session$/);
    const response = await fetch(new URL("/", sessionUrl));
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("shows the sessions list, the run tree, the unresolved attempt and payloads as text", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(new URL("/", sessionUrl).toString());
    await page.locator(".session-link", { hasText: demo.sessionId }).click();
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();

    const runRows = page.locator('[data-testid="run-row"]');
    await expect.poll(() => runRows.count()).toBe(2);
    await expect.poll(() => runRows.nth(1).textContent()).toContain("availability-checker");
    expect(await runRows.nth(1).textContent()).toContain("caused by tool.requested find_slots");
    // The tokens the model calls reported, as inspect prints them: on the run, its call, the
    // session's header.
    expect(await runRows.nth(0).textContent()).toContain("42 in / 17 out tokens");
    expect(await page.locator(".session-head").textContent()).toContain("42 in / 17 out tokens");
    const modelRow = page.locator('[data-testid="attempt-row"]', { hasText: "model" }).first();
    expect(await modelRow.textContent()).toContain("42 in / 17 out tokens");
    const unresolved = page.locator('[data-testid="unresolved"]');
    expect(await unresolved.textContent()).toContain(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- ${demo.sessionId} ${demo.unresolvedAttemptId}`,
    );
    // What the call was and whether it writes, as inspect says: what the person must check.
    expect(await unresolved.textContent()).toContain(
      `effect: write, not idempotent · request: {"name":"book_table","args":{"slot":"20:00"},`,
    );
    const unresolvedRow = page.locator('[data-testid="attempt-row"].unresolved');
    expect(await unresolvedRow.textContent()).toContain("tool book_table [call-2]UNRESOLVED");

    // The injection payload: shown as text, never run or rendered.
    await page.locator("tr.event-row", { hasText: "input.received" }).click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    expect(await payload.textContent()).toContain(INJECTION.replace(/"/g, '\\"'));
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("main img, main script, #bold").count()).toBe(0);

    // Blobs referenced by an event are resolved and shown as text too.
    await page.locator("tr.event-row", { hasText: "evidence.recorded" }).click();
    const blob = page.locator('[data-testid="event-detail"] pre.blob');
    await blob.waitFor();
    expect(await blob.textContent()).toBe("menu.txt: soup <b>of the day</b>");

    const screenshot = join(directory, "viewer-session.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    console.log(`[agent-ledger] viewer screenshot: ${screenshot}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("updates live while the session grows", async () => {
    const page = await browser.newPage();
    await page.goto(sessionUrl);
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    const rows = page.locator("tr.event-row");
    const before = await rows.count();
    await demo.recorder.abandon(
      {
        stepId: "x",
        attemptId: demo.unresolvedAttemptId,
        requestedEventId: "y",
        toolCallId: "call-2",
      },
      "booked by phone <i>really</i>",
    );
    await page
      .locator("tr.event-row", { hasText: "attempt.abandoned" })
      .waitFor({ timeout: 10_000 });
    expect(await rows.count()).toBe(before + 1);
    await expect
      .poll(() => page.locator('[data-testid="attempt-row"].unresolved').count(), {
        timeout: 10_000,
      })
      .toBe(0);
    expect(await page.locator('[data-testid="unresolved"]').isHidden()).toBe(true);
    await page.close();
  });

  it("serve --session for a session not written yet: the page waits for its first events, then shows it", async () => {
    // The page threw "unknown session" once and never asked again, where serve had said its page
    // would fill once the session had events.
    const later = await startBin(
      ["--store", storeUrl, "serve", "--poll-ms", "200", "--session", "written-later"],
      /session: (http:\/\/\S+)\n/,
    );
    try {
      await expect
        .poll(() => later.errors())
        .toContain(
          'no session "written-later" in the store (yet): its page waits for its first events and shows the session once they come',
        );
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(later.match[1] as string);
      const waiting = page.locator('[data-testid="waiting-for-events"]');
      await waiting.waitFor();
      expect(await waiting.textContent()).toContain("No events yet: waiting for its first events");
      expect(await page.locator("main h1").textContent()).toBe("Session written-later");
      expect(await page.locator("#live").isHidden()).toBe(false);
      // A few polls later it is still waiting, not an error.
      await page.waitForTimeout(700);
      expect(await page.locator("main").textContent()).not.toContain("Error");
      const recorder = await startedRun("written-later", "main", "latecomer");
      await recorder.beforeToolCall({ toolCallId: "c1", name: "late_call", args: {} });
      await page
        .locator('[data-testid="attempt-row"].unresolved', { hasText: "late_call" })
        .waitFor({ timeout: 10_000 });
      expect(await waiting.count()).toBe(0);
      expect(await page.locator('[data-testid="run-row"]').textContent()).toContain("latecomer");
      await expect.poll(() => page.locator("tr.event-row").count()).toBe(2);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      later.child.kill("SIGTERM");
    }
  });

  it("marks only the fork's copy of an attempt, and its resolve command works in a shell", async () => {
    const sessionId = "fork it's here";
    const recorder = await startedRun(sessionId, "main", "shopper");
    const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await store.fork({ sessionId, runId: "main", newRunId: "branch", uptoSeq: 2 });
    await recorder.toolCompleted(charge, "charged");
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${encodeURIComponent(sessionId)}`, sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"]').nth(1).waitFor();
    const unresolvedRows = page.locator('[data-testid="attempt-row"].unresolved');
    expect(await unresolvedRows.count()).toBe(1);
    expect(await page.locator('[data-testid="attempt-row"]').nth(0).textContent()).toContain(
      "completed",
    );
    const command = await page.locator('[data-testid="unresolved"] code').textContent();
    expect(command).toBe(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- 'fork it'\\''s here' ${charge.attemptId}`,
    );
    await page.close();
    // Pasted into a shell, its reason filled in, it abandons the fork's copy.
    expect((await runPasted((command as string).replace('"reason"', '"checked"'))).code).toBe(0);
    const after = await inspectSession(store, sessionId);
    expect(after.unresolved).toEqual([]);
    const branch = after.runs.find((run) => run.runId === "branch");
    const copy = branch?.steps
      .flatMap((step) => step.attempts)
      .find((attempt) => attempt.attemptId === charge.attemptId);
    expect(copy?.status).toBe("abandoned");
  });

  it("asks first for the innermost call in flight, not the agent call waiting on it", async () => {
    const sessionId = "nested-in-flight";
    // The agent call is made again by itself; one that is a decision itself comes first
    // (viewer-decisions.test.ts).
    const { inner } = await recordNestedInFlight(store, sessionId, { outerEffect: MADE_AGAIN });
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"].unresolved').nth(1).waitFor();
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(2);
    const outerItem = items.filter({ hasText: "writer_tool" });
    expect(await outerItem.textContent()).not.toContain("agent-ledger resolve");
    expect(await outerItem.textContent()).toContain(
      "waits on a call in flight inside its child run: decide that call first",
    );
    expect(await items.filter({ hasText: "tool write" }).locator("code").textContent()).toBe(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- ${sessionId} ${inner.attemptId}`,
    );
    await page.close();
  });

  it("says why a run and a call failed in the run tree, as inspect does", async () => {
    const sessionId = "failed-run";
    const recorder = await startedRun(sessionId, "run-f", "payer");
    const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await recorder.toolFailed(charge, new Error("card declined <b>now</b>"));
    await recorder.failRun(new Error("gave up after the charge failed"));
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"]').waitFor();
    expect(await page.locator('[data-testid="run-row"]').textContent()).toContain(
      "Error: gave up after the charge failed",
    );
    expect(await page.locator('[data-testid="attempt-row"]').textContent()).toContain(
      "card declined <b>now</b>",
    );
    await page.close();
  });

  it("shows sessions named . and .., which a browser would fold out of a URL path", async () => {
    for (const sessionId of [".", ".."]) {
      await startedRun(sessionId, "run-1", `agent of ${sessionId}`);
    }
    const page = await browser.newPage();
    for (const sessionId of [".", ".."]) {
      await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
      await page.locator('[data-testid="run-row"]').waitFor();
      expect(await page.locator("h1").textContent()).toBe(`Session ${sessionId}`);
      expect(await page.locator('[data-testid="run-row"]').textContent()).toContain(
        `agent of ${sessionId}`,
      );
    }
    await page.close();
  });

  it("shows the start of a huge payload at once, and all of it on request", async () => {
    // A 30 MB tool result put in the detail pane whole held the tab for 15 s and more.
    const sessionId = "huge-result";
    const recorder = await startedRun(sessionId, "run-1", "fetcher");
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "fetch", args: {} });
    await recorder.toolCompleted(call, `${"a web page line\n".repeat(200_000)}THE END`);
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    await page.locator("tr.event-row", { hasText: "tool.completed" }).click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    const shown = (await payload.textContent()) ?? "";
    expect(shown.length).toBeLessThanOrEqual(256 * 1024);
    expect(shown).not.toContain("THE END");
    const [completed] = await resolveEvents(
      store,
      (await store.readSession({ sessionId })).events.filter(
        (event: LedgerEvent) => event.type === "tool.completed",
      ),
    );
    const full = JSON.stringify(completed?.payload, null, 2);
    const showAll = page.locator('[data-testid="event-detail"] button', { hasText: "show all" });
    expect(await showAll.textContent()).toBe(
      `show all ${full.length.toLocaleString("en-US")} characters`,
    );
    await showAll.click();
    await expect.poll(() => payload.textContent()).toBe(full);
    await page.close();
  });

  it("lists events as stored and shows the selected one with its content put back", async () => {
    // Each model request re-sends the conversation: the list must not hold it resolved.
    const sessionId = "long-conversation";
    const recorder = await startedRun(sessionId, "run-1", "chat");
    const question = `${"what will the weather be tomorrow? ".repeat(60)}END OF QUESTION`;
    await recorder.beforeModelCall({
      request: { model: "m", messages: [{ role: "user", content: question }] },
    });
    const page = await browser.newPage();
    // What the page's event list asks for: the events as stored (blob references).
    const list = page.waitForResponse(
      (response) =>
        response.url().includes("/api/session/events?") && response.url().includes("limit=500"),
    );
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    const listed = await (await list).text();
    expect(listed).toContain('"$ledger":"list"');
    expect(listed).not.toContain("END OF QUESTION");
    await page.locator("tr.event-row", { hasText: "model.requested" }).click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    expect(await payload.textContent()).toContain("END OF QUESTION");
    expect(await payload.textContent()).not.toContain("$ledger");
    await page.close();
  });

  it("works from the URL printed with --token", async () => {
    // The page loaded its script and stylesheet without the token: both were refused and
    // the viewer stayed at "Loading…" for everyone it was shared with.
    const tokenServer = await startBin(
      ["--store", storeUrl, "serve", "--token", "s3cret-token-value"],
      /viewer on (http:\/\/\S+)\n/,
    );
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    try {
      const printed = tokenServer.match[1] as string;
      await page.goto(printed);
      await page.locator(".session-link", { hasText: demo.sessionId }).click();
      await page.locator('[data-testid="attempt-row"]').first().waitFor();
      expect(await page.locator("h1").textContent()).toBe(`Session ${demo.sessionId}`);
      expect(errors).toEqual([]);
      // The data still needs the token; the page's own code holds none.
      const base = new URL("/", printed);
      expect((await fetch(new URL("/api/sessions", base))).status).toBe(401);
      expect((await fetch(new URL(`/api/session?id=${demo.sessionId}`, base))).status).toBe(401);
      expect((await fetch(new URL("/", base))).status).toBe(401);
      const script = await fetch(new URL("/app.js", base));
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    } finally {
      await page.close();
      tokenServer.child.kill("SIGTERM");
    }
  });

  it("brings the run tree up to date after a failed refresh, with no further events", async () => {
    const sessionId = "refresh-failed";
    const recorder = await startedRun(sessionId, "run-1", "a");
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "send", args: {} });
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    // The next inspection request fails once (a restart, a busy store), after the events came.
    let failed = 0;
    await page.route(
      (url) => url.pathname === "/api/session",
      (route) => (failed++ === 0 ? route.abort() : route.continue()),
    );
    await recorder.toolCompleted(call, "sent");
    await page.locator("tr.event-row", { hasText: "tool.completed" }).waitFor();
    await expect.poll(() => failed).toBeGreaterThan(0);
    await expect
      .poll(() => page.locator('[data-testid="attempt-row"].unresolved').count(), {
        timeout: 5_000,
      })
      .toBe(0);
    expect(await page.locator('[data-testid="unresolved"]').isHidden()).toBe(true);
    await page.close();
  });

  it("stays on the page last asked for when an earlier one answers late", async () => {
    const page = await browser.newPage();
    // The sessions list of a large store answers slowly; the person opens a session meanwhile.
    let asked!: () => void;
    const listAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let listed!: () => void;
    const listAnswered = new Promise<void>((resolve) => {
      listed = resolve;
    });
    await page.route(
      (url) => url.pathname === "/api/sessions",
      async (route) => {
        asked();
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await route.continue();
        listed();
      },
    );
    await page.goto(new URL("/", sessionUrl).toString());
    await listAsked;
    // A same-document navigation: only the hash changes.
    await page.goto(new URL(`/#/session/${demo.sessionId}`, sessionUrl).toString());
    await page.locator('[data-testid="run-row"]').first().waitFor();
    await listAnswered;
    await page.waitForTimeout(300);
    expect(await page.locator("h1").textContent()).toBe(`Session ${demo.sessionId}`);
    expect(await page.locator('[data-testid="run-row"]').count()).toBe(2);
    await page.close();
  });

  it("pages the sessions list with its button, and says when a page could not be fetched", async () => {
    const manyUrl = `sqlite:${join(directory, "many.db")}`;
    const many = await openStore(manyUrl);
    for (let index = 0; index < 1003; index++)
      await many.append({
        sessionId: `s${String(index).padStart(4, "0")}`,
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
    await many.close();
    const manyServer = await startBin(["--store", manyUrl, "serve"], /viewer on (http:\/\/\S+)\n/);
    const page = await browser.newPage();
    try {
      await page.goto(manyServer.match[1] as string);
      const links = page.locator(".session-link");
      await links.first().waitFor();
      expect(await links.count()).toBe(1000);
      const more = page.locator('[data-testid="more-sessions"]');
      // The next page fails once (the viewer restarted): the person is told, and may try again.
      let failed = 0;
      await page.route(
        (url) => url.pathname === "/api/sessions" && url.searchParams.has("after"),
        (route) => (failed++ === 0 ? route.abort() : route.continue()),
      );
      await more.click();
      await page.locator('[data-testid="more-sessions-error"]').waitFor();
      expect(await links.count()).toBe(1000);
      expect(await more.isEnabled()).toBe(true);
      await more.click();
      await expect.poll(() => links.count()).toBe(1003);
      expect(await more.isHidden()).toBe(true);
      expect(await page.locator('[data-testid="more-sessions-error"]').count()).toBe(0);
      expect(await links.last().textContent()).toBe("s1002");
    } finally {
      await page.close();
      manyServer.child.kill("SIGTERM");
    }
  });

  it("offers no resolve command for an attempt on a closed run", async () => {
    const sessionId = "cancelled-mid-call";
    const recorder = await startedRun(sessionId, "run-1", "a");
    await recorder.beforeToolCall({ toolCallId: "c1", name: "transfer", args: {} });
    await recorder.cancelRun("stopped by operator");
    const page = await browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    const box = page.locator('[data-testid="unresolved"]');
    expect(await box.textContent()).toContain(
      "Run run-1 is cancelled: it takes no more events and will not be resumed",
    );
    expect(await box.textContent()).not.toContain("agent-ledger resolve");
    await page.close();
  });
});
