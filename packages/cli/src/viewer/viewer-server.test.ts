import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, openStore } from "@agent-ledger/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession } from "../session-fixture.test.data.js";
import { startViewer, type ViewerHandle } from "./viewer-server.js";

describe("viewer API on bad input", () => {
  let store: EventStore;
  let viewer: ViewerHandle;

  beforeAll(async () => {
    store = await openStore(
      `sqlite:${join(mkdtempSync(join(tmpdir(), "agent-ledger-api-")), "l.db")}`,
    );
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
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.code, path).toBe("invalid-argument");
      expect(body.error, path).toEqual(expect.any(String));
    }
    const unknown = await get("/api/sessions/no-such-session");
    expect(unknown.status).toBe(404);
    expect((await get("/api/sessions/api-session")).status).toBe(200);
  });
});
