import { type EventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { launchChromium } from "./chromium.test.data.js";
import { type DemoSession, recordDemoSession, startBin } from "./session-fixture.test.data.js";

/** An agent call's effect that the next resume makes again by itself. */
export const MADE_AGAIN = { kind: "none", idempotent: true } as const;

/** What the viewer's tests in Chromium share: read inside tests, where `beforeAll` has set them. */
export interface ViewerInChromium {
  /** The store at `storeUrl`, holding the demo session. */
  readonly store: EventStore;
  readonly demo: DemoSession;
  readonly browser: Browser;
  /** The served viewer's page of the demo session. */
  readonly sessionUrl: string;
  /** A recorder on a new run of `sessionId` in the viewer's store, its run started. */
  startedRun(sessionId: string, runId: string, agent: string): Promise<SessionRecorder>;
}

/**
 * For the tests of the enclosing `describe`: the demo session recorded in the store at
 * `storeUrl`, `agent-ledger serve` on it (its session page polled every 200 ms) and Chromium;
 * all stopped after them. Call it inside `describe.skipIf(!haveChromium)`.
 */
export function viewerInChromium({ storeUrl }: { storeUrl: string }): ViewerInChromium {
  let store: EventStore | undefined;
  let demo: DemoSession | undefined;
  let browser: Browser | undefined;
  let server: Awaited<ReturnType<typeof startBin>> | undefined;
  let sessionUrl = "";

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

  return {
    get store() {
      return store as EventStore;
    },
    get demo() {
      return demo as DemoSession;
    },
    get browser() {
      return browser as Browser;
    },
    get sessionUrl() {
      return sessionUrl;
    },
    async startedRun(sessionId, runId, agent) {
      const recorder = new SessionRecorder({
        store: store as EventStore,
        sessionId,
        runId,
        actor: { type: "agent", id: agent },
      });
      await recorder.startRun();
      return recorder;
    },
  };
}
