import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";

// The next-step command is copied as a unit: a double-click on it selected one word of it, and
// a triple-click the whole item. As viewer.test.ts: the page runs in a real headless Chromium.

describe.skipIf(!haveChromium)("the viewer's command to copy", () => {
  let context: BrowserContext;
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  beforeAll(async () => {
    context = await ui.browser.newContext({ permissions: ["clipboard-read", "clipboard-write"] });
    const main = new SessionRecorder({
      store,
      sessionId: "copy",
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    await main.startRun();
    await main.beforeToolCall({ toolCallId: "c1", name: "pay", args: { cents: 5 } });
  });

  afterAll(async () => {
    await context?.close();
  });

  async function open(): Promise<Page> {
    const page = await context.newPage();
    await page.goto(ui.viewer.sessionUrl("copy"));
    await page.locator('[data-testid="unresolved"] code').waitFor();
    return page;
  }

  const commandOf = async (page: Page) =>
    (await page.locator('[data-testid="unresolved"] code').textContent()) ?? "";

  it("selects the whole command at a click, and copies it with its button", async () => {
    const page = await open();
    const command = await commandOf(page);
    expect(command).toMatch(/^agent-ledger resolve --abandon "reason" -- copy /);
    const code = page.locator('[data-testid="unresolved"] code');
    expect(
      await code.evaluate(
        (element) => element.ownerDocument.defaultView?.getComputedStyle(element).userSelect,
      ),
    ).toBe("all");
    const copy = page.locator('[data-testid="unresolved"] [data-testid="copy-command"]');
    await copy.click();
    await expect.poll(() => page.evaluate("navigator.clipboard.readText()")).toBe(command);
    expect(await copy.textContent()).toBe("copied");
    // The button copies; it does not open the item's event.
    expect(await page.locator('[data-testid="event-detail"] h3').count()).toBe(0);
    // A double-click selected one word of it.
    await code.dblclick();
    expect(await page.evaluate("String(getSelection())")).toBe(command);
    // Selecting the command opens nothing: the page stays where the person copies from.
    expect(await page.locator('[data-testid="event-detail"] h3').count()).toBe(0);
    await page.close();
  });

  it("selects the command for the person to copy where the page has no clipboard", async () => {
    const page = await context.newPage();
    // As a page served on a name that is no secure context: no clipboard API.
    await page.addInitScript(
      'Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined })',
    );
    await page.goto(ui.viewer.sessionUrl("copy"));
    await page.locator('[data-testid="unresolved"] code').waitFor();
    const command = await commandOf(page);
    await page.locator('[data-testid="copy-command"]').click();
    await expect.poll(() => page.evaluate("String(getSelection())")).toBe(command);
    await page.close();
  });
});
