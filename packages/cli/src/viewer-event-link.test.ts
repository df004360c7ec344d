import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";

// A long session: the event chosen in the unresolved box is shown where the person looks, and
// its page's address names it, to send a colleague. As viewer.test.ts: a real headless Chromium.

describe.skipIf(!haveChromium)("the viewer's chosen event", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);
  let inFlight = "";

  beforeAll(async () => {
    const main = new SessionRecorder({
      store,
      sessionId: "long",
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    await main.startRun();
    // Enough calls that the tree pushes the detail pane far below the unresolved box.
    for (let index = 0; index < 150; index++) {
      const call = await main.beforeToolCall({ toolCallId: `c${index}`, name: "read", args: {} });
      await main.toolCompleted(call, "ok");
    }
    const pay = await main.beforeToolCall({ toolCallId: "c-pay", name: "pay", args: {} });
    inFlight = pay.requestedEventId;
  });

  async function newPage(): Promise<Page> {
    return ui.browser.newPage({ viewport: { width: 1200, height: 700 } });
  }

  const detailText = (page: Page) => page.locator('[data-testid="event-detail"]').textContent();

  it("scrolls the chosen event into view and names it in the address", async () => {
    const page = await newPage();
    await page.goto(ui.viewer.sessionUrl("long"));
    await page.locator('[data-testid="unresolved"] li').click();
    await expect.poll(() => detailText(page)).toContain(inFlight);
    const heading = await page.locator('[data-testid="event-detail"] h3').boundingBox();
    expect(heading?.y).toBeGreaterThanOrEqual(0);
    expect(heading?.y).toBeLessThan(700);
    expect(new URL(page.url()).hash).toBe(`#/session/long/event/${inFlight}`);
    await page.close();
  });

  it("opens a link to an event with that event shown, and an old link to the session still", async () => {
    const page = await newPage();
    const link = new URL(ui.viewer.sessionUrl("long"));
    link.hash = `#/session/long/event/${encodeURIComponent(inFlight)}`;
    await page.goto(link.toString());
    await expect.poll(() => detailText(page)).toContain(inFlight);
    expect(await page.locator("h1").textContent()).toBe("Session long");
    expect(await page.locator("tr.event-row.selected").getAttribute("data-event-id")).toBe(
      inFlight,
    );
    await page.goto(ui.viewer.sessionUrl("long"));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    expect(await page.locator("h1").textContent()).toBe("Session long");
    await page.close();
  });
});
