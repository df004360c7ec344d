import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { SerializedError } from "./json.js";
import { rebuiltError } from "./rebuilt-error.js";

const dir = scratchDirectory("agent-ledger-rebuilt-error-", { beforeAll, afterAll });
const address = { sessionId: "s", runId: "r", actor: { type: "agent", id: "t" } } as const;

/** A provider's rate limit, as an HTTP client throws it: a status, a code, the socket's cause. */
function rateLimited(): Error {
  const socket = Object.assign(new Error("socket closed"), { code: "ECONNRESET" });
  const error = new Error("Rate limit reached", { cause: socket });
  error.name = "RateLimitError";
  return Object.assign(error, { status: 429, code: "rate_limit_exceeded" });
}

describe("rebuiltError", () => {
  it("gives back, from a SQLite ledger on resume, the name, message, code, status and causes of the failure", async () => {
    const path = join(dir, "ledger.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const live = new SessionRecorder({ store, ...address });
    await live.startRun();
    const call = await live.beforeModelCall({ request: { prompt: "hi" } });
    await live.modelFailed(call, rateLimited());

    const resumed = await SessionRecorder.resume({ store, ...address });
    const replayed = (await resumed.beforeModelCall({ request: { prompt: "hi" } })).replayed;
    if (replayed?.status !== "failed") throw new Error(`replayed ${replayed?.status}`);
    const error = rebuiltError(replayed.error);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "RateLimitError",
      message: "Rate limit reached",
      code: "rate_limit_exceeded",
      status: 429,
    });
    // A framework walks the chain through `instanceof Error` (a retry policy's ECONNRESET).
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.cause).toMatchObject({
      name: "Error",
      message: "socket closed",
      code: "ECONNRESET",
    });
    // Its stack is where it was thrown again, not the dead process's.
    expect(error.stack).not.toBe(replayed.error.stack);
  });

  it("keeps a numeric code, and sets no field the record does not hold", () => {
    const error = rebuiltError({ name: "GrpcError", message: "unavailable", code: 14 });
    expect(error).toMatchObject({ name: "GrpcError", message: "unavailable", code: 14 });
    expect(Object.hasOwn(error, "status")).toBe(false);
    expect(Object.hasOwn(error, "cause")).toBe(false);
  });

  it("leaves out the fields a redaction or an old ledger left of the wrong type", () => {
    const stored = {
      name: 7,
      message: null,
      code: { redacted: true },
      status: "429",
      cause: "[redacted]",
    } as unknown as SerializedError;
    const error = rebuiltError(stored);
    expect(error.name).toBe("Error");
    expect(error.message).toBe("");
    for (const field of ["code", "status", "cause"])
      expect(Object.hasOwn(error, field), field).toBe(false);
  });
});
