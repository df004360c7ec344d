import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { Actor } from "../events/types.js";
import { verifyRun } from "../inspect/verify-run.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { scanSqliteForSecret } from "../testing/secret-scan.js";
import { DEFAULT_CREDENTIAL_PATHS, type Redaction, reachesMetadata } from "./redact.js";
import { SessionRecorder } from "./session-recorder.js";

// `redact` reaches each event's metadata too (the recorder's, the call's, an adapter's): a
// secret there reached every stored event, the exports and the projections.

const scratch = scratchDirectory("redact-metadata-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "a" };
const address = { sessionId: "s", runId: "r" };
const EMAIL = "alice@example.com";
const SSN = "078-05-1120";

/** A run recorded on a fresh SQLite file with `redact`: a model call, a tool call, the end. */
async function recordRun(name: string, redact: Redaction) {
  const path = join(scratch, `${name}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    ...address,
    actor,
    redact,
    metadata: { user: { email: EMAIL }, tenant: "acme" },
  });
  await recorder.startRun();
  const model = await recorder.beforeModelCall({
    request: { messages: [] },
    metadata: { patient: { ssn: SSN } },
  });
  await recorder.modelCompleted(model, { text: "ok" });
  const tool = await recorder.beforeToolCall({ toolCallId: "t1", name: "lookup", args: {} });
  await recorder.toolCompleted(tool, "done");
  await recorder.completeRun();
  const events = await readWholeRun(store, address);
  const verified = await verifyRun(store, address);
  await store.close();
  return {
    events,
    verified,
    /** Where in the file's tables a string is (empty: nowhere), compressed bodies decoded. */
    stored: (secret: string) => scanSqliteForSecret(path, secret),
  };
}

/** Replaces `secret` in every string of a value. */
function scrub(value: JsonValue, secret: string): JsonValue {
  if (typeof value === "string") return value.replaceAll(secret, "[email]");
  if (Array.isArray(value)) return value.map((item) => scrub(item, secret));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, secret)]));
}

describe("redact on event metadata", () => {
  it("a path list reaches the metadata by `metadata.` and `**` paths: no stored row holds the secrets", async () => {
    const { events, verified, stored } = await recordRun("paths", [
      "metadata.user.email",
      "**.ssn",
    ]);
    expect(await stored(EMAIL)).toEqual([]);
    expect(await stored(SSN)).toEqual([]);
    for (const event of events)
      expect(event.metadata?.user, event.type).toEqual({ email: "[redacted]" });
    const requested = events.find((event) => event.type === "model.requested");
    expect(requested?.metadata).toEqual({
      user: { email: "[redacted]" },
      tenant: "acme",
      patient: { ssn: "[redacted]" },
    });
    // The chain is of the events as stored.
    expect(verified).toMatchObject({ ok: true });
  });

  it("a path list that cannot reach metadata leaves it as given, and its walk is skipped", async () => {
    // The adapters' default list is all `request.**` paths: the metadata of every recorded
    // event was walked for them to no effect.
    expect(reachesMetadata(DEFAULT_CREDENTIAL_PATHS)).toBe(false);
    expect(reachesMetadata(["request.headers", "metadatax.email", "x.metadata"])).toBe(false);
    for (const path of ["metadata.user", "metadata", "**.email", "*.user", "*", "**"])
      expect(reachesMetadata([path]), path).toBe(true);
    expect(reachesMetadata(() => ({}))).toBe(true);
    const { events, verified } = await recordRun("credentials-only", DEFAULT_CREDENTIAL_PATHS);
    expect(verified.ok).toBe(true);
    expect(events[1]?.metadata).toEqual({
      user: { email: EMAIL },
      tenant: "acme",
      patient: { ssn: SSN },
    });
  });

  it("a function is called with `{ metadata }` and part `metadata`, and what it returns is stored", async () => {
    const parts = new Set<string>();
    const { events, stored } = await recordRun("function", (payload, context) => {
      parts.add(context.part ?? "payload");
      return scrub(payload, EMAIL);
    });
    expect(parts).toEqual(new Set(["payload", "metadata"]));
    expect(await stored(EMAIL)).toEqual([]);
    expect(events[0]?.metadata?.user).toEqual({ email: "[email]" });
  });

  it("a function that returns no metadata refuses the call (not taken for none): nothing written, no call left open", async () => {
    const path = join(scratch, "refused.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    let refuse = false;
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: (payload) => {
        // Written for payloads only: it drops everything but a request.
        if (refuse) return { request: (payload as JsonObject).request ?? null };
        return payload;
      },
    });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: {} });
    refuse = true;
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (caught: unknown) => caught as LedgerError,
      );
    const requested = await refused(
      recorder.beforeModelCall({ request: {}, metadata: { user: EMAIL } }),
    );
    expect(LedgerError.isInstance(requested, "invalid-argument"), String(requested)).toBe(true);
    expect(requested?.message).toContain(
      "must return the metadata of a model.requested event as { metadata: {...} }",
    );
    // Refused on an outcome, the call is still open: it can be completed once the redaction lets it.
    const completed = await refused(
      recorder.modelCompleted(model, { text: "ok" }, { metadata: { user: EMAIL } }),
    );
    expect(LedgerError.isInstance(completed, "invalid-argument"), String(completed)).toBe(true);
    refuse = false;
    await recorder.modelCompleted(model, { text: "ok" });
    await recorder.completeRun();
    expect((await readWholeRun(store, address)).map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    await store.close();
  });

  it("metadataAsStored tells an adapter what the redaction keeps of metadata it is about to record", async () => {
    const recorder = new SessionRecorder({
      store: new SqliteEventStore({ path: join(scratch, "as-stored.db") }),
      ...address,
      actor,
      metadata: { tenant: "acme" },
      redact: ["metadata.langchain.threadId"],
    });
    expect(
      recorder.metadataAsStored("model.requested", { langchain: { threadId: EMAIL } }),
    ).toEqual({
      tenant: "acme",
      langchain: { threadId: "[redacted]" },
    });
  });

  it("a run written before without it resumes under it: its calls are answered, what is written from then on is redacted", async () => {
    const path = join(scratch, "older.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const before = new SessionRecorder({ store, ...address, actor, metadata: { email: EMAIL } });
    await before.startRun();
    const call = { toolCallId: "t1", name: "lookup", args: {} };
    await before.toolCompleted(await before.beforeToolCall(call), "found");
    const resumed = await SessionRecorder.resume({
      store,
      ...address,
      actor,
      metadata: { email: EMAIL },
      redact: ["**.email"],
    });
    expect((await resumed.beforeToolCall(call)).replayed).toMatchObject({
      status: "completed",
      result: "found",
    });
    await resumed.completeRun();
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.metadata?.email)).toEqual([
      EMAIL,
      EMAIL,
      EMAIL,
      "[redacted]",
    ]);
    expect(await verifyRun(store, address)).toMatchObject({ ok: true });
    await store.close();
  });
});
