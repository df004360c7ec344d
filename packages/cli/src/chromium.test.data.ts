import { existsSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { startViewer, type ViewerHandle } from "./viewer/viewer-server.js";

/** The headless Chromium the viewer's pages are tested in. */
const CHROMIUM = "/usr/bin/chromium";

/** Whether the browser tests can run; under CI=true a missing Chromium is an error, not a skip. */
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  if (process.env.CI === "true")
    throw new Error(`CI=true and ${CHROMIUM} is missing: run scripts/install-test-tools.sh`);
  console.warn(
    `[agent-ledger] skipping the viewer browser tests: ${CHROMIUM} is missing (run scripts/install-test-tools.sh)`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * A viewer on `store` (polling every 200 ms) and a headless Chromium to open its pages, started
 * before the file's tests and closed after them: what every viewer test file sets up. Read
 * `browser` and `viewer` inside hooks and tests, once they are started.
 */
export function viewerInChromium(store: EventStore): { browser: Browser; viewer: ViewerHandle } {
  const started = {} as { browser: Browser; viewer: ViewerHandle };
  beforeAll(async () => {
    started.viewer = await startViewer({ store, pollMs: 200 });
    started.browser = await launchChromium();
  });
  afterAll(async () => {
    await started.browser?.close();
    await started.viewer?.close();
  });
  return started;
}
