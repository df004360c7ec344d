import { join } from "node:path";
import { type EventStore, inspectSession, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "./chromium.test.data.js";
import { runPasted } from "./session-fixture.test.data.js";
import { startViewer, type ViewerHandle } from "./viewer/viewer-server.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

// The invisible characters that set the direction of the text after (or around) them. An id
// refuses C0 and C1 controls, not these; a name, an argument or an error message may hold any.
const DIRECTION_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Where the first text node under `root` holding `needle` shows it: its box on the page. */
async function boxOf(root: Locator, needle: string) {
  return root.evaluate((element, text) => {
    // 4: NodeFilter.SHOW_TEXT (this package's lib has no DOM types).
    const walker = element.ownerDocument.createTreeWalker(element, 4);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent?.indexOf(text) ?? -1;
      if (at < 0) continue;
      const range = element.ownerDocument.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const { left, right, top } = range.getBoundingClientRect();
      return { left, right, top };
    }
    throw new Error(`no text ${text}`);
  }, needle);
}

/**
 * Each of `needles` (text under `root`, or a locator's element) where a reader of left to right
 * text looks for it after the one before: right of it on its line, or on a line below.
 */
async function readsLeftToRight(root: Locator, needles: (string | Locator)[]) {
  const boxes = [];
  for (const needle of needles)
    boxes.push(
      typeof needle === "string"
        ? await boxOf(root, needle)
        : await needle.evaluate((element) => {
            // Where it starts: an element that wraps has a box on each line.
            const { left, right, top } = element.getClientRects()[0];
            return { left, right, top };
          }),
    );
  for (let index = 1; index < boxes.length; index++) {
    const before = boxes[index - 1] as { right: number; top: number };
    const after = boxes[index] as { left: number; top: number };
    const next = after.top > before.top + 4 || after.left >= before.right - 1;
    expect(next, `${needles[index]} after ${needles[index - 1]}`).toBe(true);
  }
}

/** Every text and tooltip the page shows under `root`: none may hold a raw direction control. */
async function shownText(root: Locator): Promise<string> {
  return root.evaluate((element) =>
    [
      element.textContent ?? "",
      ...[...element.querySelectorAll("[title]")].map((titled) => titled.getAttribute("title")),
    ].join("\n"),
  );
}

describe.skipIf(!haveChromium)("the viewer on text that sets its own direction", () => {
  let browser: Browser;
  let viewer: ViewerHandle;
  let store: EventStore;
  const directory = scratchDirectory("agent-ledger-viewer-bidi-", { beforeAll, afterAll });
  const storeUrl = `sqlite:${join(directory, "ledger.db")}`;

  beforeAll(async () => {
    store = await openStore(storeUrl);
    viewer = await startViewer({ store, storeUrl, pollMs: 200 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    await store?.close();
  });

  async function open(sessionId: string, shown = '[data-testid="attempt-row"]'): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1900, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(viewer.sessionUrl(sessionId));
    await page.locator(shown).first().waitFor();
    expect(errors).toEqual([]);
    return page;
  }

  it("keeps the words after a value holding a right-to-left override in their order, and shows the override", async () => {
    const sessionId = "bidi-spoof";
    const recorder = new SessionRecorder({
      store,
      sessionId,
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({
      toolCallId: "c1",
      name: "transfer_funds\u202E",
      args: { amount: 1000000, to: "attacker" },
      effect: { kind: "write", idempotent: false },
    });
    const read = await recorder.beforeToolCall({
      toolCallId: "c2",
      name: "read_file\u202E",
      args: { path: "/etc/shadow" },
      effect: { kind: "read", idempotent: true },
    });
    const helper = recorder.child({
      runId: "helper",
      actor: { type: "agent", id: "helper\u202E" },
      causedByEventId: read.requestedEventId,
    });
    await helper.startRun();
    await helper.failRun(new Error("gave up\u202E"));
    await recorder.toolFailed(read, new Error("permission denied\u202E"));
    const page = await open(sessionId);

    // The unresolved box: the sentence, the command and the request read left to right.
    const item = page.locator('[data-testid="unresolved"] li');
    await readsLeftToRight(item, [
      item.locator("strong"),
      "requested",
      "on run",
      "no outcome recorded",
      item.locator("code"),
    ]);
    expect(await item.textContent()).toContain("tool transfer_funds\\u202e requested ");
    await readsLeftToRight(item, [
      "effect:",
      "not idempotent",
      "request:",
      '"amount"',
      "1000000",
      '"attacker"',
    ]);
    // The override is shown, in a style of its own, where it is in the value.
    const shownControl = item.locator("strong .control");
    expect(await shownControl.textContent()).toBe("\\u202e");
    // Each value isolated from the page's words around it.
    for (const value of [item.locator("strong"), item.locator("code")])
      expect(
        await value.evaluate(
          (element) => element.ownerDocument.defaultView.getComputedStyle(element).unicodeBidi,
        ),
      ).toBe("isolate");

    // The run tree: the attempt's badge, time and reason after its name; the run's reason and
    // cause after its agent.
    const attempt = page.locator('[data-testid="attempt-row"]', { hasText: "read_file" });
    await readsLeftToRight(attempt, ["read_file", attempt.locator(".badge"), "permission denied"]);
    expect(await attempt.textContent()).toContain("permission denied\\u202e");
    const run = page.locator('[data-testid="run-row"]', { hasText: "helper" });
    await readsLeftToRight(run, [
      "helper",
      run.locator(".badge"),
      "gave up",
      run.locator(".cause"),
    ]);
    expect(
      await run
        .locator(".reason")
        .evaluate(
          (element) => element.ownerDocument.defaultView.getComputedStyle(element).unicodeBidi,
        ),
    ).toBe("isolate");

    // The event's payload shows the override escaped, as JSON writes it: the same value.
    await page.locator("tr.event-row", { hasText: "tool.requested" }).first().click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    expect(await payload.textContent()).toContain('"name": "transfer_funds\\u202e"');

    expect(await shownText(page.locator("main"))).not.toMatch(DIRECTION_CONTROL);
    expect(await page.locator('[data-testid="unresolved"]').textContent()).not.toContain("null");
    await page.close();
  });

  it("shows a session id holding an override escaped, and its resolve command copied from the page works", async () => {
    const sessionId = "refund\u202Enur\u200F";
    const recorder = new SessionRecorder({
      store,
      sessionId,
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({ toolCallId: "c1", name: "refund", args: {} });
    const page = await open(sessionId);
    const heading = page.locator("h1");
    expect(await heading.textContent()).toBe("Session refund\\u202enur\\u200f");
    expect(await heading.locator(".control").count()).toBe(2);
    const command = (await page.locator('[data-testid="unresolved"] code').textContent()) ?? "";
    expect(command).toContain("-- $'refund\\u202enur\\u200f' ");
    expect(await shownText(page.locator("main"))).not.toMatch(DIRECTION_CONTROL);
    await page.close();
    const pasted = await runPasted(command.replace('"reason"', '"refunded by hand"'));
    expect(pasted.stderr).toBe("");
    expect(pasted.code).toBe(0);
    expect((await inspectSession(store, sessionId)).unresolved).toEqual([]);
  });

  it("makes a class only of the event types it knows: a custom type names none", async () => {
    const sessionId = "custom-types";
    const recorder = new SessionRecorder({
      store,
      sessionId,
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await store.append({
      sessionId,
      runId: "main",
      expectedSeq: 1,
      events: [
        { type: "x.<img src=x> selected unresolved attempt-row", payload: {} },
        { type: "input.received", payload: { input: "hi" } },
      ],
    });
    const page = await open(sessionId, "tr.event-row >> nth=2");
    const classes = await page
      .locator("tr.event-row")
      .evaluateAll((rows) => rows.map((row) => [...row.classList]));
    expect(classes).toEqual([
      ["event-row", "type-run-started"],
      ["event-row", "type-custom"],
      ["event-row", "type-input-received"],
    ]);
    await page.close();
  });
});
