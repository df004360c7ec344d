import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectSession } from "../inspect/inspect-session.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

// An SDK's response object (a class instance, a Date inside) given as an outcome: the error
// said what was wrong, not what to pass instead, nor that the call it settles stays unresolved.

const scratch = scratchDirectory("outcome-not-json-", { beforeAll, afterAll });
const actor = { type: "agent" as const, id: "a" };

class ChatCompletion {
  constructor(
    readonly id: string,
    readonly created: Date,
  ) {}
}

describe("an outcome that is not plain JSON", () => {
  it("says it is the model's response or the tool's result, how to pass a plain copy, and that the call stays unresolved", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "ledger.db") });
    await store.init();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { messages: [] } });
    const response = new ChatCompletion("c1", new Date(0));
    const refusedModel = recorder.modelCompleted(model, response);
    await expect(refusedModel).rejects.toMatchObject({ code: "non-serializable", path: "$" });
    await expect(refusedModel).rejects.toThrow(
      /^\$ is an instance of ChatCompletion, which is not plain JSON\. It is the model's response: record a plain JSON copy of it \(JSON\.parse\(JSON\.stringify\(response\)\), or pick the fields you need\)\. Nothing was written: the call was made, and it stays unresolved until its outcome is recorded/,
    );

    const tool = await recorder.beforeToolCall({ toolCallId: "t1", name: "clock", args: {} });
    const refusedTool = recorder.toolCompleted(tool, { now: new Date(0) });
    await expect(refusedTool).rejects.toMatchObject({ code: "non-serializable", path: "$.now" });
    await expect(refusedTool).rejects.toThrow(/It is the tool's result: record a plain JSON copy/);

    expect((await inspectSession(store, "s")).unresolved).toHaveLength(2);
    // The plain copy is recorded, and settles the call.
    await recorder.modelCompleted(model, JSON.parse(JSON.stringify(response)));
    await recorder.toolCompleted(tool, { now: new Date(0).toISOString() });
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    await store.close();
  });
});
