import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
