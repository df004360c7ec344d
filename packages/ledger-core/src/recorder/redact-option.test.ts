import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "planner" };
const request = { model: "m", apiKey: "sk-live-1234", messages: [{ role: "user", content: "hi" }] };

describe("the redact option", () => {
  it("a redaction that would match nothing or throw later is refused when the recorder is made", async () => {
    const store = new MemoryEventStore();
    for (const [label, redact, path] of [
      ["a single string", "request.apiKey", "$.redact"],
      ["a number", 5, "$.redact"],
      ["an object", { paths: ["request.apiKey"] }, "$.redact"],
      ["a non-string path", ["request.apiKey", 5], "$.redact[1]"],
      ["an empty path", [""], "$.redact[0]"],
      ["an empty segment", ["request..apiKey"], "$.redact[0]"],
      ["a trailing dot", ["request.apiKey."], "$.redact[0]"],
    ] as const) {
      let error: unknown;
      try {
        new SessionRecorder({ store, sessionId: "s", actor, redact: redact as never });
      } catch (caught) {
        error = caught;
      }
      expect(LedgerError.isInstance(error, "invalid-argument"), `${label}: ${String(error)}`).toBe(
        true,
      );
      expect((error as LedgerError).path, label).toBe(path);
    }
    expect((await store.listSessions()).sessions).toEqual([]);
  });

  it("a paths array is copied: changing it afterwards does not change what is removed", async () => {
    const store = new MemoryEventStore();
    const redact = ["request.apiKey"];
    const recorder = new SessionRecorder({ store, sessionId: "s", actor, redact });
    redact.length = 0;
    const attempt = await recorder.beforeModelCall({ request });
    expect(attempt.request).toMatchObject({ apiKey: "[redacted]" });
  });
});
