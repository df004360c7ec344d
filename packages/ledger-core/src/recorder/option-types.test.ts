import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWholeSession } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

// A call's option of the wrong type is the caller's argument (invalid-argument at its path,
// with words that fit); `name: 42` said "a tool call needs a name" though one was given, and
// `idempotent: "yes"` came back as invalid-event, as if a stored event were bad. Ids stay
// invalid-event wherever they are given (DESIGN §6), with the type they were given.

const scratch = scratchDirectory("option-types-", { beforeAll, afterAll });
const actor = { type: "agent" as const, id: "a" };

async function startedLedger(name: string) {
  const store = new SqliteEventStore({ path: join(scratch, `${name}.db`) });
  await store.init();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  return { store, recorder };
}

describe("a call's option of the wrong type", () => {
  it("is invalid-argument at the option's path, saying what it takes and what it got, and writes nothing", async () => {
    const { store, recorder } = await startedLedger("calls");
    const refusals: [unknown, string, RegExp][] = [
      [
        { name: 42, args: {} },
        "$.name",
        /a tool call's name must be a non-empty string, got number/,
      ],
      [
        { name: "", args: {} },
        "$.name",
        /a tool call's name must be a non-empty string, got an empty string/,
      ],
      [{ args: {} }, "$.name", /a tool call needs a name/],
      [
        { name: "t", args: {}, effect: { kind: "read", idempotent: "yes" } },
        "$.effect.idempotent",
        /effect idempotent must be a boolean/,
      ],
      [
        { name: "t", args: {}, effect: { kind: "sometimes" } },
        "$.effect.kind",
        /effect kind must be/,
      ],
    ];
    for (const [options, path, words] of refusals) {
      const refused = recorder.beforeToolCall(options as never);
      await expect(refused).rejects.toMatchObject({ code: "invalid-argument", path });
      await expect(refused).rejects.toThrow(words);
    }
    // An id of the wrong type stays invalid-event, as everywhere else (DESIGN §6).
    await expect(
      recorder.beforeToolCall({ toolCallId: 5, name: "t", args: {} } as never),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.toolCallId" });
    expect(await readWholeSession(store, "s")).toHaveLength(1);
    await store.close();
  });
});
