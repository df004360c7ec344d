import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../events/json.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { asMarker } from "./marker.js";
import { BlobCache, resolveEvents } from "./resolve.js";

const folder = scratchDirectory("ledger-missing-blobs-", { beforeAll, afterAll });

const kept = "Kept answer. ".repeat(300);
const lost = "Refund order 42 for Ada. ".repeat(200);

/** A session whose first request's long message text is then deleted from the blob store. */
async function sessionWithLostBlob(name: string) {
  const path = join(folder, `${name}.db`);
  let store = new SqliteEventStore({ path });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    sessionId: name,
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const first = await recorder.beforeModelCall({
    request: { model: "m", messages: [{ role: "user", content: lost }] },
  });
  await recorder.modelCompleted(first, { content: kept });
  await recorder.beforeToolCall({ toolCallId: "c1", name: "refund", args: { order: 42 } });
  const events = await readWholeRun(store, { sessionId: name, runId: recorder.runId });
  const lostRef = (await store.putBlob(lost)) as string;
  await store.close();
  const database = new Database(path);
  const digest = Buffer.from(lostRef.slice("sha256:".length), "hex");
  expect(database.prepare("DELETE FROM blobs WHERE digest = ?").run(digest).changes).toBe(1);
  database.close();
  store = new SqliteEventStore({ path });
  await store.init();
  return { store, events, lostRef, runId: recorder.runId };
}

describe("a blob an event names is missing from the store", () => {
  it('resolve keeps its marker and reports it with missingBlobs: "keep"; the default stays not-found', async () => {
    const { store, events, lostRef } = await sessionWithLostBlob("resolve-keep");
    try {
      await expect(resolveEvents(store, events)).rejects.toMatchObject({ code: "not-found" });
      const cache = new BlobCache();
      const resolved = await resolveEvents(store, events, { cache, missingBlobs: "keep" });
      expect([...cache.missing]).toEqual([lostRef]);
      const request = resolved.find((event) => event.type === "model.requested")
        ?.payload as JsonObject;
      const text = JSON.stringify(request);
      expect(text).toContain(lostRef);
      expect(text).not.toContain("Refund order 42");
      // Everything else is resolved as usual.
      const response = resolved.find((event) => event.type === "model.completed")
        ?.payload as JsonObject;
      expect((response.response as JsonObject).content).toBe(kept);
    } finally {
      await store.close();
    }
  });

  it("a lost list node keeps the list's marker in front of the messages still known", async () => {
    const path = join(folder, "list-node.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const recorder = new SessionRecorder({
      store,
      sessionId: "list-node",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // Long enough for the request to be externalized: its messages become a stored list.
    const messages = [{ role: "user", content: "first ".repeat(2000) }];
    const first = await recorder.beforeModelCall({ request: { model: "m", messages } });
    await recorder.modelCompleted(first, { content: "ok" });
    await recorder.beforeModelCall({
      request: { model: "m", messages: [...messages, { role: "user", content: "second" }] },
    });
    const events = await readWholeRun(store, { sessionId: "list-node", runId: recorder.runId });
    const firstRequest = events.find((event) => event.type === "model.requested")
      ?.payload as JsonObject;
    const rootList = asMarker((firstRequest.request as JsonObject).messages as JsonObject);
    if (rootList?.$ledger !== "list") throw new Error("the first request's messages are no list");
    await store.close();
    const database = new Database(path);
    const digest = Buffer.from(rootList.ref.slice("sha256:".length), "hex");
    expect(database.prepare("DELETE FROM blobs WHERE digest = ?").run(digest).changes).toBe(1);
    database.close();
    const reopened = new SqliteEventStore({ path });
    await reopened.init();
    try {
      const cache = new BlobCache();
      const resolved = await resolveEvents(reopened, events, { cache, missingBlobs: "keep" });
      const requests = resolved.filter((event) => event.type === "model.requested");
      expect(requests[1]?.payload).toMatchObject({
        request: {
          messages: [
            { $ledger: "list", ref: rootList.ref },
            { role: "user", content: "second" },
          ],
        },
      });
      expect([...cache.missing]).toEqual([rootList.ref]);
    } finally {
      await reopened.close();
    }
  });

  it('inspectSession with missingBlobs: "keep" shows the calls and lists the lost refs', async () => {
    const { store, lostRef, runId } = await sessionWithLostBlob("inspect-keep");
    try {
      await expect(inspectSession(store, "inspect-keep")).rejects.toMatchObject({
        code: "not-found",
      });
      const inspection = await inspectSession(store, "inspect-keep", { missingBlobs: "keep" });
      expect(inspection.missingBlobs).toEqual([lostRef]);
      expect(inspection.unresolved).toMatchObject([
        { kind: "tool", name: "refund", runId, request: { args: { order: 42 } } },
      ]);
      const model = inspection.runs[0]?.steps[0]?.attempts[0];
      expect(model?.status).toBe("completed");
      expect(JSON.stringify(model?.request)).toContain(lostRef);
      const whole = await inspectSession(store, "inspect-keep", { missingBlobs: "keep" });
      expect(whole.missingBlobs).toEqual([lostRef]);
    } finally {
      await store.close();
    }
  });
});
