import { join } from "node:path";
import { inspectSession, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { assistant as actor } from "./testing/scripted-model.test.data.js";
import {
  crashSiblingsInChild,
  type Mode,
  runSiblings,
  SIBLINGS,
  type Sibling,
  siblingModel,
  siblingTools,
} from "./testing/sibling-tools.test.data.js";

// A resume that forgot `wrapTools` (the middleware alone): the SDK runs the tools unwrapped,
// send_email (in flight at the crash, not idempotent) among them, so its effect happens again;
// the model call that would carry its result on is refused with the `unresolved-attempt` the
// wrapped tool would have thrown, before the provider is called or anything is recorded.

const scratch = scratchDirectory("ai-sdk-unwrapped-", { beforeAll, afterAll });
let crashes = 0;

/** The agent SIGKILLed with both tool calls in flight, its SQLite file opened again. */
async function crashed(mode: Mode, sibling: Sibling) {
  const path = join(scratch, `crash-${++crashes}.db`);
  const effects = await crashSiblingsInChild(mode, sibling, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { store, effects };
}

/** The agent resumed in this process without `wrapTools`: what it gave back or threw. */
async function resumeUnwrapped(store: SqliteEventStore, mode: Mode, sibling: Sibling) {
  const recorder = await SessionRecorder.resume({ store, actor, ...SIBLINGS });
  const effects: string[] = [];
  const tools = siblingTools({
    onEffect: (effect) => effects.push(effect),
    afterEffect: async () => {},
  });
  const model = siblingModel(sibling);
  const run = await runSiblings({ recorder, mode, model: model.model, tools, wrap: false }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { recorder, ...run, effects: effects.sort(), providerCalls: model.calls };
}

/** The `model.requested` events of the run. */
async function modelRequests(store: SqliteEventStore): Promise<number> {
  const events = await readWholeRun(store, SIBLINGS);
  return events.filter((event) => event.type === "model.requested").length;
}

/** A person decides each attempt in flight at the crash with `decide` (abandon or approve). */
async function decideAll(store: SqliteEventStore, decision: "abandon" | "approve") {
  const person = await SessionRecorder.resume({ store, actor, ...SIBLINGS });
  for (const attempt of (await inspectSession(store, SIBLINGS.sessionId)).unresolved)
    await person[decision](attempt, "checked by a person");
}

describe.each(["generate", "stream"] as const)("%sText resumed without wrapTools", (mode) => {
  it("refuses the model call after send_email (undecided) with unresolved-attempt, recording no live call", async () => {
    const { store } = await crashed(mode, "lookup");
    const before = await modelRequests(store);

    const resumed = await resumeUnwrapped(store, mode, "lookup");
    // The SDK ran the unwrapped tools: send_email's effect happened again (wrapTools prevents it).
    expect(resumed.effects).toEqual(["email bob", "lookup 42"]);
    const refusal = {
      code: "unresolved-attempt",
      attempt: { name: "send_email", toolCallId: "c2" },
      message: expect.stringContaining("tool call send_email (c2) was in flight"),
    };
    if (mode === "generate") expect(resumed.error).toMatchObject(refusal);
    else {
      expect(resumed.result?.parts).toContain("error:unresolved-attempt");
      expect(resumed.result?.errors).toHaveLength(1);
      expect(resumed.result?.errors[0]).toMatchObject(refusal);
    }
    // The first call was answered from the ledger, the next refused before the provider.
    expect(resumed.providerCalls).toBe(0);
    expect(await modelRequests(store)).toBe(before);
    expect(
      (await inspectSession(store, SIBLINGS.sessionId)).unresolved.map((attempt) => attempt.name),
    ).toEqual(["lookup", "send_email"]);
  });

  it.each(["abandon", "approve"] as const)(
    "goes on once a person decided (%s) the calls in flight",
    async (decision) => {
      const { store } = await crashed(mode, "charge");
      await decideAll(store, decision);

      const resumed = await resumeUnwrapped(store, mode, "charge");
      expect(resumed.error).toBeUndefined();
      expect(resumed.result?.text).toBe("All done");
      expect(resumed.providerCalls).toBe(1);
    },
  );
});
