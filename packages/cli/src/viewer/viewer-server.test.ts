import { join } from "node:path";
import { type EventStore, openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession } from "../session-fixture.test.data.js";
import { startViewer, type ViewerHandle } from "./viewer-server.js";

describe("viewer API on bad input", () => {
  let store: EventStore;
  let viewer: ViewerHandle;
  const directory = scratchDirectory("agent-ledger-api-", afterAll);

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
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.code, path).toBe("invalid-argument");
      expect(body.error, path).toEqual(expect.any(String));
    }
    const unknown = await get("/api/sessions/no-such-session");
    expect(unknown.status).toBe(404);
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
