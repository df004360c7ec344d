import { type EventStore, MemoryEventStore } from "@agent-ledger/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionsWithOpenWork } from "../open-work.js";
import { crashesAmongFinished, finished } from "../open-work.test.data.js";
import { sessionPages } from "../store.js";
import { OPEN_WORK_PAGE, type OpenWorkPage } from "./open-work-page.js";
import { startViewer, type ViewerHandle } from "./viewer-server.js";

describe("viewer API: the sessions with something open", () => {
  let store: EventStore;
  let viewer: ViewerHandle;
  const get = async (query: string) => {
    const response = await fetch(new URL(`/api/open-work${query}`, viewer.url));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    store = new MemoryEventStore();
    await finished(store, "a-finished");
    await crashesAmongFinished(store);
    viewer = await startViewer({ store });
  });
  afterAll(async () => {
    await viewer?.close();
    await store?.close();
  });

  it("reads the sessions a page at a time and answers those with something open, with inspect's counts", async () => {
    const pages: OpenWorkPage[] = [];
    let query = "?limit=2";
    for (;;) {
      const { status, body } = await get(query);
      expect(status).toBe(200);
      const page = body as unknown as OpenWorkPage;
      pages.push(page);
      if (page.nextCursor === undefined) break;
      query = `?limit=2&after=${encodeURIComponent(page.nextCursor)}`;
    }
    const all = OPEN_WORK_PAGE + 5 + 6;
    expect(pages.map((page) => page.checked)).toEqual([
      ...Array.from({ length: Math.floor(all / 2) }, () => 2),
      ...(all % 2 === 1 ? [1] : []),
    ]);
    expect(
      pages.slice(0, 3).map((page) => page.sessions.map((session) => session.sessionId)),
    ).toEqual([["b-crashed"], ["c-idle", "d-paused"], ["e-crashed-twice"]]);
    const open = pages.flatMap((page) => page.sessions);
    expect(
      open.map(({ sessionId, unresolved, paused, openRuns }) => ({
        sessionId,
        unresolved,
        paused,
        openRuns,
      })),
    ).toEqual([
      { sessionId: "b-crashed", unresolved: 1, paused: 0, openRuns: 0 },
      { sessionId: "c-idle", unresolved: 0, paused: 0, openRuns: 1 },
      // The agent call its pause keeps open is counted with its paused run, as inspect says it.
      { sessionId: "d-paused", unresolved: 0, paused: 1, openRuns: 0 },
      { sessionId: "e-crashed-twice", unresolved: 2, paused: 0, openRuns: 0 },
      { sessionId: "g-crashed-last", unresolved: 1, paused: 0, openRuns: 0 },
    ]);
    // What `sessions --unresolved --json` lists, summaries and counts alike.
    const listed = [];
    for await (const page of sessionPages(store))
      listed.push(...(await sessionsWithOpenWork(store, page)));
    expect(open).toEqual(listed);
  });

  it("reads at most a page of sessions per request, whatever the limit asked", async () => {
    const first = (await get("")).body as unknown as OpenWorkPage;
    expect(first.checked).toBe(OPEN_WORK_PAGE);
    const rest = (await get(`?limit=5000&after=${encodeURIComponent(first.nextCursor ?? "")}`))
      .body as unknown as OpenWorkPage;
    expect(rest.checked).toBe(11);
    expect(rest.nextCursor).toBeUndefined();
    expect(rest.sessions.map((session) => session.sessionId)).toEqual(["g-crashed-last"]);
  });

  it("refuses a bad after or limit with a code, naming it", async () => {
    for (const [query, message] of [
      ["?after=a%01b", /^after is a session id/],
      [`?after=${"a".repeat(256)}`, /^after is a session id/],
      ["?limit=0", /^limit is a whole number of sessions from 1 \(at most 100 a page\), not "0"/],
      ["?limit=1.5", /^limit is a whole number of sessions from 1/],
    ] as const) {
      const { status, body } = await get(query);
      expect(status, query).toBe(400);
      expect(body, query).toEqual({
        error: expect.stringMatching(message),
        code: "invalid-argument",
      });
    }
  });
});
