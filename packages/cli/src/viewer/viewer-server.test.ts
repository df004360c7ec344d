import { get } from "node:http";
import { join } from "node:path";
import { type EventStore, MemoryEventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession } from "../session-fixture.test.data.js";
import { startViewer, type ViewerHandle } from "./viewer-server.js";

describe("viewer API on bad input", () => {
  let store: EventStore;
  let viewer: ViewerHandle;
  const directory = scratchDirectory("agent-ledger-api-", { beforeAll, afterAll });

  beforeAll(async () => {
    store = await openStore(`sqlite:${join(directory, "l.db")}`);
    await recordDemoSession(store, "api-session");
    viewer = await startViewer({ store });
  });
  afterAll(async () => {
    await viewer?.close();
    await store?.close();
  });

  const get = async (path: string) => {
    const response = await fetch(new URL(path, viewer.url));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("answers 400 with a code, not 500, for a malformed id or escape", async () => {
    for (const path of [
      "/api/sessions/%E0%A4%A",
      "/api/blobs/%ZZ",
      "/api/sessions/a%01b",
      "/api/sessions/a%01b/events",
      `/api/sessions/${"a".repeat(300)}`,
      "/api/session",
      "/api/session/events?id=",
      "/api/session?id=a%01b",
      // Past Number.MAX_SAFE_INTEGER: no exact integer, refused before the store reads it.
      "/api/session/events?id=api-session&after=99999999999999999999",
      "/api/session?id=api-session&after=99999999999999999999",
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.code, path).toBe("invalid-argument");
      expect(body.error, path).toEqual(expect.any(String));
    }
    const unknown = await get("/api/sessions/no-such-session");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not-found");
    // A misspelt id read as a session with no events yet: the page waited for events forever.
    for (const path of [
      "/api/session/events?id=no-such-session",
      "/api/session/events?id=no-such-session&after=3",
      "/api/session/event?id=no-such-session&eventId=e1",
      "/api/nothing-here",
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(404);
      expect(body, path).toEqual({ error: expect.any(String), code: "not-found" });
    }
    const atEnd = await get("/api/session/events?id=api-session&after=1000000");
    expect(atEnd.status).toBe(200);
    expect(atEnd.body.events).toEqual([]);
    expect((await get("/api/sessions/api-session")).status).toBe(200);
    expect((await get("/api/session?id=api-session")).status).toBe(200);
    expect((await get("/api/session?id=no-such-session")).status).toBe(404);
  });
});

describe("viewer API on a store of many sessions", () => {
  it("pages the session list with nextCursor, so every session can be reached", async () => {
    // The list stopped at the first 5,000 sessions by id, with no way to the others.
    const store = await openStore("memory:");
    const viewer = await startViewer({ store });
    try {
      const count = 5003;
      for (let index = 0; index < count; index++)
        await store.append({
          sessionId: `s${String(index).padStart(5, "0")}`,
          runId: "r",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
      const seen: string[] = [];
      let path = "/api/sessions";
      for (;;) {
        const response = await fetch(new URL(path, viewer.url));
        expect(response.status).toBe(200);
        const page = (await response.json()) as {
          sessions: { sessionId: string }[];
          nextCursor?: string;
        };
        for (const session of page.sessions) seen.push(session.sessionId);
        if (page.nextCursor === undefined) break;
        path = `/api/sessions?after=${encodeURIComponent(page.nextCursor)}`;
      }
      expect(seen).toHaveLength(count);
      expect(seen[count - 1]).toBe("s05002");
      expect(new Set(seen).size).toBe(count);
      const bad = await fetch(new URL("/api/sessions?after=a%01b", viewer.url));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { code?: string }).code).toBe("invalid-argument");
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});

describe("viewer API: the session list's limit", () => {
  it("pages by limit as listSessions does, and refuses a limit that is no whole number from 1, naming it", async () => {
    // limit was ignored: /api/sessions?limit=2 answered every session (up to 1,000).
    const store = await openStore("memory:");
    const viewer = await startViewer({ store });
    const list = async (query: string) => {
      const response = await fetch(new URL(`/api/sessions${query}`, viewer.url));
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    try {
      for (const sessionId of ["a", "b", "c", "d", "e"])
        await store.append({
          sessionId,
          runId: "r",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
      const first = await list("?limit=2");
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        sessions: [{ sessionId: "a" }, { sessionId: "b" }],
        nextCursor: "b",
      });
      const ids = (body: Record<string, unknown>) =>
        (body.sessions as { sessionId: string }[]).map((session) => session.sessionId);
      const second = await list("?limit=2&after=b");
      expect(ids(second.body)).toEqual(["c", "d"]);
      const last = await list("?after=d&limit=2");
      expect(ids(last.body)).toEqual(["e"]);
      expect(last.body.nextCursor).toBeUndefined();
      expect(ids((await list("?limit=5000")).body)).toEqual(["a", "b", "c", "d", "e"]);
      for (const bad of ["0", "-1", "1.5", "abc", "", "1e3", "99999999999"]) {
        const refused = await list(`?limit=${encodeURIComponent(bad)}`);
        expect(refused.status, bad).toBe(400);
        expect(refused.body.code).toBe("invalid-argument");
        expect(refused.body.error).toMatch(/^limit is a whole number of sessions from 1/);
      }
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});

describe("viewer API: a page of events resolved", () => {
  it("stops adding events once the page's JSON passes 8 MB, and gives the cursor to go on from", async () => {
    // Each model request re-sends the conversation: resolved, 2000 of them were 228 MB, and
    // past 512 MB the answer was a 500 (Invalid string length).
    const store = new MemoryEventStore();
    const viewer = await startViewer({ store });
    try {
      const recorder = new SessionRecorder({
        store,
        sessionId: "long",
        actor: { type: "agent", id: "a" },
      });
      await recorder.startRun();
      const megabyte = (index: number) => `${index} ${"m".repeat(1024 * 1024)}`;
      for (let index = 0; index < 12; index++) {
        const call = await recorder.beforeModelCall({
          request: { model: "m", messages: [{ role: "user", content: megabyte(index) }] },
        });
        await recorder.modelCompleted(call, { text: "ok" });
      }
      // One event past the bound on its own still comes, alone.
      await recorder.recordInput(`${"h".repeat(9 * 1024 * 1024)} END`);
      await recorder.completeRun("done");
      const seen: number[] = [];
      let after = 0;
      let pages = 0;
      for (;;) {
        const response = await fetch(
          new URL(`/api/session/events?id=long&after=${after}&limit=2000`, viewer.url),
        );
        expect(response.status).toBe(200);
        const text = await response.text();
        const page = JSON.parse(text) as {
          events: { commitCursor: number; payload: unknown }[];
          nextCursor: number;
          truncated?: true;
        };
        pages++;
        expect(page.events.length).toBeGreaterThan(0);
        const last = page.events[page.events.length - 1] as { commitCursor: number };
        expect(page.nextCursor).toBe(last.commitCursor);
        // Under the bound, but for the event that passed it (or one alone).
        if (page.events.length > 1) {
          const withoutLast = JSON.stringify(page.events.slice(0, -1));
          expect(Buffer.byteLength(withoutLast)).toBeLessThanOrEqual(8 * 1024 * 1024);
        }
        for (const event of page.events) seen.push(event.commitCursor);
        after = page.nextCursor;
        if (!page.truncated) break;
      }
      // Every event once, in order, content put back.
      expect(seen).toEqual(Array.from({ length: 27 }, (_, index) => index + 1));
      expect(pages).toBeGreaterThan(2);
      const input = await fetch(
        new URL("/api/session/events?id=long&after=25&limit=1", viewer.url),
      );
      expect(
        ((await input.json()) as { events: { payload: { input: string } }[] }).events[0]?.payload
          .input,
      ).toMatch(/ END$/);
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});

describe("viewer API: what the session page asks", () => {
  it("says a session is unchanged since the cursor its inspection was made at, in a few bytes", async () => {
    const store = new MemoryEventStore();
    const viewer = await startViewer({ store });
    try {
      const { recorder } = await recordDemoSession(store, "grows");
      const inspect = async (query = "") => {
        const response = await fetch(new URL(`/api/session?id=grows${query}`, viewer.url));
        expect(response.status).toBe(200);
        return (await response.json()) as { lastCursor: number; unchanged?: true; runs?: unknown };
      };
      const first = await inspect();
      expect(first.lastCursor).toBe(12);
      expect(await inspect("&after=12")).toEqual({ unchanged: true, lastCursor: 12 });
      await recorder.recordInput("more");
      const next = await inspect("&after=12");
      expect(next.unchanged).toBeUndefined();
      expect(next.lastCursor).toBe(13);
      // A cursor the session never reached is no inspection of it.
      expect((await inspect("&after=99")).lastCursor).toBe(13);
      const bad = await fetch(new URL("/api/session?id=grows&after=x", viewer.url));
      expect(bad.status).toBe(400);
    } finally {
      await viewer.close();
      await store.close();
    }
  });

  it("gives an event by its id, its content put back", async () => {
    const store = new MemoryEventStore();
    const viewer = await startViewer({ store });
    try {
      await recordDemoSession(store, "by-id");
      const { events } = await store.readSession({ sessionId: "by-id" });
      const input = events.find((event) => event.type === "input.received");
      const get = (eventId: string) =>
        fetch(
          new URL(`/api/session/event?id=by-id&eventId=${encodeURIComponent(eventId)}`, viewer.url),
        );
      const found = await get(input?.eventId as string);
      expect(found.status).toBe(200);
      expect(((await found.json()) as { event: unknown }).event).toEqual(input);
      expect((await get("no-such-event")).status).toBe(404);
      expect((await get("a\u0001b")).status).toBe(400);
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});

describe("viewer API from other sites", () => {
  let viewer: ViewerHandle;
  const store = new MemoryEventStore();

  beforeAll(async () => {
    await recordDemoSession(store, "site-session");
    viewer = await startViewer({ store });
  });
  afterAll(async () => {
    await viewer?.close();
    await store.close();
  });

  // With node:http: fetch sends a Sec-Fetch-Mode of its own.
  const status = (path: string, headers: Record<string, string | undefined>) =>
    new Promise<number | undefined>((resolve, reject) => {
      const sent = Object.fromEntries(
        Object.entries(headers).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      );
      get(new URL(path, viewer.url), { headers: sent }, (response) => {
        response.resume();
        resolve(response.statusCode);
      }).on("error", reject);
    });

  it("refuses a request another site's page makes: cross-site, same-site or another Origin", async () => {
    const own = new URL(viewer.url).origin;
    for (const path of ["/api/sessions", "/api/session?id=site-session", "/", "/app.js"]) {
      for (const headers of [
        { "Sec-Fetch-Site": "cross-site" },
        { "Sec-Fetch-Site": "same-site" },
        { Origin: "http://evil.example" },
        { Origin: "null" },
        { Origin: own.replace(/:\d+$/, ":1") },
      ])
        expect({ path, headers, status: await status(path, headers) }).toEqual({
          path,
          headers,
          status: 403,
        });
    }
  });

  it("answers the page's own requests, a browser's address bar and curl", async () => {
    const own = new URL(viewer.url).origin;
    for (const path of ["/api/sessions", "/api/session?id=site-session", "/", "/app.js"]) {
      for (const headers of [
        {},
        { "Sec-Fetch-Site": "same-origin" },
        { "Sec-Fetch-Site": "none" },
        { "Sec-Fetch-Site": "same-origin", Origin: own },
        // Behind a reverse proxy that rewrites Host, the page's own requests name an Origin
        // other than the Host the viewer sees: a browser's same-origin is believed.
        { "Sec-Fetch-Site": "same-origin", Origin: "https://ledger.example.com" },
      ])
        expect({ path, headers, status: await status(path, headers) }).toEqual({
          path,
          headers,
          status: 200,
        });
    }
    // A link to the page from another site (a chat, a ticket) opens it; its data the page
    // then asks for itself, same-origin.
    const navigation = { "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document" };
    expect(await status("/", { ...navigation, "Sec-Fetch-Site": "cross-site" })).toBe(200);
    expect(await status("/api/sessions", { ...navigation, "Sec-Fetch-Site": "cross-site" })).toBe(
      403,
    );
  });
});
