import { join } from "node:path";
import { type LedgerEvent, openStore, resolveEvents } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium } from "./chromium.test.data.js";
import { startBin } from "./session-fixture.test.data.js";
import { viewerInChromium } from "./viewer.test.data.js";

// The second half of the viewer in Chromium (see viewer.test.ts), on a store and server of its own.

const directory = scratchDirectory("agent-ledger-viewer-", { beforeAll, afterAll });
const storeUrl = `sqlite:${join(directory, "ledger.db")}`;

describe.skipIf(!haveChromium)("agent-ledger serve in Chromium", () => {
  const viewer = viewerInChromium({ storeUrl });

  it("shows sessions named . and .., which a browser would fold out of a URL path", async () => {
    for (const sessionId of [".", ".."]) {
      await viewer.startedRun(sessionId, "run-1", `agent of ${sessionId}`);
    }
    const page = await viewer.browser.newPage();
    for (const sessionId of [".", ".."]) {
      await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
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
    const recorder = await viewer.startedRun(sessionId, "run-1", "fetcher");
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "fetch", args: {} });
    await recorder.toolCompleted(call, `${"a web page line\n".repeat(200_000)}THE END`);
    const page = await viewer.browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
    // The first events are drawn while the session is inspected; the inspection then draws the
    // header and the run tree above the list, moving its rows down. A click aimed at a row
    // before that can land on what took its place: the likely cause of this test's two failures
    // in CI runs on a busy machine (no payload shown in 30 s, where it takes 2.5 s), never seen
    // alone. The tree is waited for first, as a person would see the page settle.
    await page.locator('[data-testid="run-row"]').waitFor();
    await page.locator("tr.event-row", { hasText: "tool.completed" }).click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    const shown = (await payload.textContent()) ?? "";
    expect(shown.length).toBeLessThanOrEqual(256 * 1024);
    expect(shown).not.toContain("THE END");
    const [completed] = await resolveEvents(
      viewer.store,
      (await viewer.store.readSession({ sessionId })).events.filter(
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
    const recorder = await viewer.startedRun(sessionId, "run-1", "chat");
    const question = `${"what will the weather be tomorrow? ".repeat(60)}END OF QUESTION`;
    await recorder.beforeModelCall({
      request: { model: "m", messages: [{ role: "user", content: question }] },
    });
    const page = await viewer.browser.newPage();
    // What the page's event list asks for: the events as stored (blob references).
    const list = page.waitForResponse(
      (response) =>
        response.url().includes("/api/session/events?") && response.url().includes("limit=500"),
    );
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
    const listed = await (await list).text();
    expect(listed).toContain('"$ledger":"list"');
    expect(listed).not.toContain("END OF QUESTION");
    // The run tree drawn first: it moves the rows down (see above).
    await page.locator('[data-testid="run-row"]').waitFor();
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
    const page = await viewer.browser.newPage();
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    try {
      const printed = tokenServer.match[1] as string;
      await page.goto(printed);
      await page.locator(".session-link", { hasText: viewer.demo.sessionId }).click();
      await page.locator('[data-testid="attempt-row"]').first().waitFor();
      expect(await page.locator("h1").textContent()).toBe(`Session ${viewer.demo.sessionId}`);
      expect(errors).toEqual([]);
      // The data still needs the token; the page's own code holds none.
      const base = new URL("/", printed);
      expect((await fetch(new URL("/api/sessions", base))).status).toBe(401);
      expect((await fetch(new URL(`/api/session?id=${viewer.demo.sessionId}`, base))).status).toBe(
        401,
      );
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
    const recorder = await viewer.startedRun(sessionId, "run-1", "a");
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "send", args: {} });
    const page = await viewer.browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
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
    const page = await viewer.browser.newPage();
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
    await page.goto(new URL("/", viewer.sessionUrl).toString());
    await listAsked;
    // A same-document navigation: only the hash changes.
    await page.goto(new URL(`/#/session/${viewer.demo.sessionId}`, viewer.sessionUrl).toString());
    await page.locator('[data-testid="run-row"]').first().waitFor();
    await listAnswered;
    await page.waitForTimeout(300);
    expect(await page.locator("h1").textContent()).toBe(`Session ${viewer.demo.sessionId}`);
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
    const page = await viewer.browser.newPage();
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
    const recorder = await viewer.startedRun(sessionId, "run-1", "a");
    await recorder.beforeToolCall({ toolCallId: "c1", name: "transfer", args: {} });
    await recorder.cancelRun("stopped by operator");
    const page = await viewer.browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    const box = page.locator('[data-testid="unresolved"]');
    expect(await box.textContent()).toContain(
      "Run run-1 is cancelled: it takes no more events and will not be resumed",
    );
    expect(await box.textContent()).not.toContain("agent-ledger resolve");
    await page.close();
  });
});
