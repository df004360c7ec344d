import { MemoryEventStore } from "@agent-ledger/core";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";
import { crashesAmongFinished, finished } from "./open-work.test.data.js";
import { OPEN_WORK_PAGE } from "./viewer/open-work-page.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

describe.skipIf(!haveChromium)("the viewer's page of sessions with something open", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  /** The page, opened from the sessions list's link as a person would, after `prepare`. */
  async function openWorkPage(
    prepare: (page: Page) => Promise<unknown> = async () => {},
  ): Promise<{ page: Page; errors: string[] }> {
    const page = await ui.browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await prepare(page);
    await page.goto(ui.viewer.url);
    await page.locator('[data-testid="open-link"]').click();
    return { page, errors };
  }

  const status = (page: Page) => page.locator('[data-testid="open-status"]').textContent();

  it("says so when no session has anything open", async () => {
    await finished(store, "a-finished");
    const { page, errors } = await openWorkPage();
    await page.locator('[data-testid="nothing-open"]').waitFor();
    expect(await status(page)).toBe("Read all 1 session: 0 with something open.");
    // Said once to a screen reader (the page's polite status line), when all is read.
    expect(await page.locator("#announce").textContent()).toBe(
      "Read all 1 session: 0 with something open.",
    );
    expect(await page.locator('[data-testid="open-sessions"]').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists them with inspect's counts, reading on past a failed request, each a link to its session", async () => {
    await crashesAmongFinished(store);
    // The second request fails once (the viewer restarted): the person is told, and goes on.
    let failed = 0;
    const { page, errors } = await openWorkPage((page) =>
      page.route(
        (url) => url.pathname === "/api/open-work" && url.searchParams.has("after"),
        (route) => (failed++ === 0 ? route.abort() : route.continue()),
      ),
    );
    const retry = page.locator('[data-testid="open-retry"]');
    await retry.waitFor();
    expect(await page.locator('[data-testid="open-error"]').textContent()).toMatch(
      /^Could not read more sessions: .+ try again$/,
    );
    expect(await page.locator("#announce").textContent()).toMatch(
      /^Could not read more sessions: /,
    );
    // What the first request found stays shown.
    expect(await status(page)).toBe(
      `Reading… ${OPEN_WORK_PAGE} sessions read, 4 with something open.`,
    );
    await retry.click();
    await expect
      .poll(() => status(page))
      .toBe(`Read all ${OPEN_WORK_PAGE + 11} sessions: 5 with something open.`);
    expect(await page.locator('[data-testid="open-error"]').count()).toBe(0);
    expect(await page.locator("#announce").textContent()).toBe(
      `Read all ${OPEN_WORK_PAGE + 11} sessions: 5 with something open.`,
    );
    const rows = page.locator('[data-testid="open-sessions"] tbody tr');
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const [id, events, , open] = [...tr.querySelectorAll("td")].map((td) => td.textContent);
        return [id, events, open];
      }),
    );
    expect(cells).toEqual([
      ["b-crashed", "2", "1 unresolved"],
      ["c-idle", "1", "1 open run"],
      // The agent call its pause keeps open is counted with its paused run, as inspect says it.
      ["d-paused", "6", "1 paused"],
      ["e-crashed-twice", "3", "2 unresolved"],
      ["g-crashed-last", "2", "1 unresolved"],
    ]);

    await page.locator(".session-link", { hasText: "e-crashed-twice" }).click();
    await page.locator('[data-testid="attempt-row"].unresolved').first().waitFor();
    expect(await page.locator("h1").textContent()).toBe("Session e-crashed-twice");
    expect(await page.locator('[data-testid="attempt-row"].unresolved').count()).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("stops reading when the person moves on", async () => {
    // Three requests' worth of sessions: the answer to the second would send the third.
    for (let index = 0; index < OPEN_WORK_PAGE; index++)
      await finished(store, `h-finished-${String(index).padStart(3, "0")}`);
    const page = await ui.browser.newPage();
    const asked: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/api/open-work") asked.push(request.url());
    });
    // The second request is held until the person has gone back to the sessions list.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(
      (url) => url.pathname === "/api/open-work" && url.searchParams.has("after"),
      async (route) => {
        await held;
        await route.continue();
      },
    );
    await page.goto(new URL("#/open", ui.viewer.url).toString());
    await expect.poll(() => asked.length).toBe(2);
    await page.locator("#home-link").click();
    await page.locator('[data-testid="sessions"]').waitFor();
    release();
    // The answer to the held request is not drawn, and no request follows it.
    await page.waitForResponse((response) => response.url() === asked[1]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(asked).toHaveLength(2);
    expect(await page.locator("h1").textContent()).toBe("Sessions");
    await page.close();
  });
});
