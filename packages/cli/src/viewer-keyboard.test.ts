import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";

// The viewer used from the keyboard alone, as an on-call engineer with a screen reader does:
// every row and item a click opens is reached by Tab and opened by Enter or Space. As
// viewer.test.ts: the page runs in a real headless Chromium.

describe.skipIf(!haveChromium)("the viewer from the keyboard", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  /** Session `sessionId`: a completed lookup, then a payment in flight (unresolved). */
  async function paymentInFlight(sessionId: string) {
    const main = new SessionRecorder({
      store,
      sessionId,
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    await main.startRun();
    const lookup = await main.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {} });
    await main.toolCompleted(lookup, "found");
    const pay = await main.beforeToolCall({ toolCallId: "c2", name: "pay", args: { cents: 5 } });
    return { main, pay };
  }

  async function open(sessionId: string): Promise<Page> {
    const page = await ui.browser.newPage();
    await page.goto(ui.viewer.sessionUrl(sessionId));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    return page;
  }

  /** Presses Tab until the focused element matches `selector` (at most `presses` times). */
  async function tabTo(page: Page, selector: string, presses = 60): Promise<boolean> {
    for (let press = 0; press < presses; press++) {
      await page.keyboard.press("Tab");
      if (await page.locator(`${selector}:focus`).count()) return true;
    }
    return false;
  }

  // The focused element's aria-label, its text, and its outline style.
  const focused = (page: Page) =>
    page.locator(":focus").evaluate((element) => ({
      name: element.getAttribute("aria-label"),
      text: element.textContent,
      outline: element.ownerDocument.defaultView?.getComputedStyle(element).outlineStyle,
    }));

  const detailHeading = (page: Page) =>
    page.locator('[data-testid="event-detail"] h3').textContent();

  it("opens an unresolved item with Enter: the detail shows its request", async () => {
    const { pay } = await paymentInFlight("keyboard-unresolved");
    const page = await open("keyboard-unresolved");
    expect(await tabTo(page, '[data-testid="unresolved"] li')).toBe(true);
    const item = await focused(page);
    expect(item.name).toContain("pay");
    // A visible focus mark: the keyboard user sees where they are.
    expect(item.outline).not.toBe("none");
    await page.keyboard.press("Enter");
    await expect.poll(() => detailHeading(page)).toContain("tool.requested");
    expect(await page.locator('[data-testid="event-detail"]').textContent()).toContain(
      pay.requestedEventId,
    );
    await page.close();
  });

  it("opens an attempt of the tree with Space and an event of the list with Enter", async () => {
    const { main } = await paymentInFlight("keyboard-rows");
    const page = await open("keyboard-rows");
    expect(await tabTo(page, '[data-testid="attempt-row"]')).toBe(true);
    expect((await focused(page)).name).toContain("lookup");
    await page.keyboard.press(" ");
    await expect.poll(() => detailHeading(page)).toContain("tool.requested");
    expect(await tabTo(page, "tr.event-row")).toBe(true);
    expect((await focused(page)).name).toContain("run.started");
    await page.keyboard.press("Enter");
    await expect.poll(() => detailHeading(page)).toContain("run.started");
    // A new event is announced politely, and the focus stays where the person is.
    const before = (await focused(page)).text;
    await main.beforeToolCall({ toolCallId: "c3", name: "notify", args: {} });
    const status = page.locator('[role="status"][aria-live="polite"]');
    await expect.poll(() => status.textContent()).toBe("5 events, 1 run, 2 unresolved");
    expect((await focused(page)).text).toBe(before);
    await page.close();
  });
});
