import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../events/json.js";
import { readWholeSession } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

// An actor or metadata of the wrong shape given to a recorder, or to one of its calls, is the
// caller's option: `invalid-argument` at the caller's path, as every other option of the wrong
// type is. It was `invalid-event`, the code of a malformed stored event, and for `recordInput`,
// `checkpoint` and `abandon` it carried the store's path (`$.events[0].metadata`), or, on a
// recorder with metadata of its own, was not refused at all: the string was spread into the
// recorder's metadata and stored as `{ "0": "e", "1": "u", ... }`. An actor's `id` stays
// `invalid-event`, as every id (DESIGN §6). An event built by the caller (`store.append`,
// `recorder.record`) keeps `invalid-event`: there the actor and metadata are fields of an event.

const scratch = scratchDirectory("actor-metadata-options-", { beforeAll, afterAll });
const actor = { type: "agent" as const, id: "a" };
const misuse = <T>(value: unknown) => value as T;

async function startedLedger(name: string, metadata?: JsonObject) {
  const store = new SqliteEventStore({ path: join(scratch, `${name}.db`) });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor,
    ...(metadata !== undefined ? { metadata } : {}),
  });
  await recorder.startRun();
  return { store, recorder };
}

function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error("nothing was thrown");
}

describe("a recorder's actor and metadata of the wrong shape", () => {
  it("are invalid-argument at the option's path when the recorder is made, an actor's id invalid-event", async () => {
    const { store } = await startedLedger("made");
    const made = (options: object) => () =>
      new SessionRecorder({ store, sessionId: "s", actor, ...options });
    const refusals: [object, string, string][] = [
      [{ actor: "bob" }, "invalid-argument", "$.actor"],
      [{ actor: { type: "robot", id: "x" } }, "invalid-argument", "$.actor.type"],
      [{ actor: { type: "agent", id: "x", name: "n" } }, "invalid-argument", "$.actor.name"],
      [{ metadata: "eu-1" }, "invalid-argument", "$.metadata"],
      [{ metadata: ["eu-1"] }, "invalid-argument", "$.metadata"],
      [{ actor: { type: "agent", id: 5 } }, "invalid-event", "$.actor.id"],
    ];
    for (const [options, code, path] of refusals)
      expect(thrownBy(made(options)), JSON.stringify(options)).toMatchObject({ code, path });
    await expect(
      SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor: misuse("bob") }),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.actor" });
    await expect(
      SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor, metadata: misuse(1) }),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.metadata" });
    const recorder = await SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor });
    expect(thrownBy(() => recorder.child({ actor: misuse("helper") }))).toMatchObject({
      code: "invalid-argument",
      path: "$.actor",
    });
    expect(thrownBy(() => recorder.metadataAsStored("x.note", misuse("eu")))).toMatchObject({
      code: "invalid-argument",
      path: "$.metadata",
    });
    expect(await readWholeSession(store, "s")).toHaveLength(1);
    await store.close();
  });

  it("are invalid-argument at the caller's path in every call, and never spread into the recorder's metadata", async () => {
    const { store, recorder } = await startedLedger("calls", { region: "eu" });
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    const model = await recorder.beforeModelCall({ request: { messages: [] } });
    const calls: [string, () => Promise<unknown>, string][] = [
      ["recordInput", () => recorder.recordInput("hi", { metadata: misuse("abc") }), "$.metadata"],
      ["checkpoint", () => recorder.checkpoint({}, { metadata: misuse(["q"]) }), "$.metadata"],
      [
        "beforeModelCall",
        () => recorder.beforeModelCall({ request: {}, metadata: misuse("m") }),
        "$.metadata",
      ],
      [
        "modelCompleted",
        () => recorder.modelCompleted(model, {}, { metadata: misuse("m") }),
        "$.metadata",
      ],
      [
        "beforeToolCall",
        () => recorder.beforeToolCall({ name: "t", args: {}, metadata: misuse(["m"]) }),
        "$.metadata",
      ],
      [
        "modelFailed",
        () => recorder.modelFailed(model, new Error("x"), { metadata: misuse("m") }),
        "$.metadata",
      ],
      [
        "toolCompleted",
        () => recorder.toolCompleted(tool, "ok", { metadata: misuse(null) }),
        "$.metadata",
      ],
      [
        "toolFailed",
        () => recorder.toolFailed(tool, new Error("x"), { metadata: misuse(true) }),
        "$.metadata",
      ],
      ["retry", () => recorder.retry(model, { metadata: misuse(7) }), "$.metadata"],
      [
        "abandon metadata",
        () => recorder.abandon(tool, "no", { metadata: misuse("zz") }),
        "$.options.metadata",
      ],
      [
        "abandon actor",
        () => recorder.abandon(tool, "no", { actor: misuse("ops") }),
        "$.options.actor",
      ],
      [
        "approve metadata",
        () => recorder.approve(tool, "ok", { metadata: misuse("zz") }),
        "$.options.metadata",
      ],
      [
        "approve actor",
        () => recorder.approve(tool, "ok", { actor: misuse({ type: "robot", id: "p" }) }),
        "$.options.actor.type",
      ],
    ];
    for (const [name, call, path] of calls) {
      const refused = call();
      await expect(refused, name).rejects.toMatchObject({ code: "invalid-argument", path });
      await expect(refused, name).rejects.toThrow(/must be (a JSON object|an object)|actor type/);
    }
    // Nothing but the run's start and the two requests: no garbled `{ "0": "a", ... }` anywhere.
    const stored = await readWholeSession(store, "s");
    expect(stored.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "model.requested",
    ]);
    for (const event of stored) expect(event.metadata).toEqual({ region: "eu" });
    await store.close();
  });

  it("stay invalid-event at the event's paths where the caller built the event", async () => {
    const { store, recorder } = await startedLedger("events", { region: "eu" });
    await expect(
      recorder.record({ type: "x.note", metadata: misuse("abc") }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.metadata" });
    await expect(recorder.record({ type: "x.note", actor: misuse("ops") })).rejects.toMatchObject({
      code: "invalid-event",
      path: "$.actor",
    });
    const append = (event: object) =>
      store.append({ sessionId: "s", runId: "r", expectedSeq: 1, events: [misuse(event)] });
    await expect(append({ type: "x.note", metadata: "abc" })).rejects.toMatchObject({
      code: "invalid-event",
      path: "$.events[0].metadata",
    });
    await expect(
      append({ type: "x.note", actor: { type: "robot", id: "p" } }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.events[0].actor.type" });
    expect(await readWholeSession(store, "s")).toHaveLength(1);
    await store.close();
  });
});
