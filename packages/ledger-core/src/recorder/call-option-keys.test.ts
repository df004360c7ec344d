import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { readWholeSession } from "../store/read-all.js";
import { startedRun } from "./started-run.test.data.js";

/** A call that should fail, its label, the path and the message its error should have. */
type Refusal = [string, () => Promise<unknown>, string, RegExp];

/** Each call fails with invalid-argument at its path, with its message. */
async function expectRefused(cases: Refusal[]) {
  for (const [label, call, path, message] of cases) {
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(LedgerError.isInstance(error, "invalid-argument"), `${label}: ${error}`).toBe(true);
    expect((error as LedgerError).path, label).toBe(path);
    expect((error as LedgerError).message, label).toMatch(message);
  }
}

/** A misspelt key of a call's options: refused at its path, the ledger left as it was. */
describe("a key a recorder call does not take", () => {
  it("is invalid-argument at its path, for before*, abandon and approve, and nothing is written", async () => {
    const { store, recorder } = await startedRun();
    const tool = await recorder.beforeToolCall({ name: "send", args: {}, toolCallId: "c0" });
    const before = await readWholeSession(store, "s");
    const loose = recorder as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const cases: Refusal[] = [
      [
        // Without its id, a resume matched the call by name and order only.
        "beforeToolCall toolCallID",
        () => loose.beforeToolCall!.call(recorder, { name: "send", args: {}, toolCallID: "c1" }),
        "$.toolCallID",
        /beforeToolCall has no option "toolCallID" \(its options: stepId, toolCallId, name/,
      ],
      [
        // Recorded as of unknown effect, a write a resume would not know to hold back.
        "beforeToolCall efect",
        () => loose.beforeToolCall!.call(recorder, { name: "send", args: {}, efect: {} }),
        "$.efect",
        /has no option "efect"/,
      ],
      [
        "beforeModelCall requests",
        () => loose.beforeModelCall!.call(recorder, { request: {}, requests: [] }),
        "$.requests",
        /beforeModelCall has no option "requests"/,
      ],
      [
        // A person's decision recorded as the agent's.
        "abandon author",
        () => loose.abandon!.call(recorder, tool, "no", { author: { type: "human", id: "u" } }),
        "$.options.author",
        /abandon has no option "author"/,
      ],
      [
        "approve by",
        () => loose.approve!.call(recorder, tool, "yes", { by: "u" }),
        "$.options.by",
        /approve has no option "by"/,
      ],
    ];
    await expectRefused(cases);
    expect(await readWholeSession(store, "s")).toEqual(before);
    // The same calls spelt right are taken.
    await recorder.abandon(tool, "no", { actor: { type: "human", id: "u" } });
    const model = await recorder.beforeModelCall({ request: {}, metadata: { turn: 1 } });
    expect(model.kind).toBe("model");
  });
});

describe("the options of an outcome, a retry, a checkpoint, an input or evidence", () => {
  it("refuse a key they do not take, and what is not an object, before anything is written", async () => {
    const { store, recorder } = await startedRun();
    const model = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    const tool = await recorder.beforeToolCall({ name: "send", args: {}, toolCallId: "c0" });
    const before = await readWholeSession(store, "s");
    const loose = recorder as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const call =
      (name: string, ...args: unknown[]) =>
      () =>
        loose[name]!.call(recorder, ...args);
    const cases: Refusal[] = [
      // Each misspelling lost what the caller meant to keep with the event.
      [
        "modelCompleted metdata",
        call("modelCompleted", model, {}, { metdata: { a: 1 } }),
        "$.options.metdata",
        /modelCompleted has no option "metdata" \(its options: metadata\)/,
      ],
      [
        "modelFailed partal",
        call("modelFailed", model, new Error("x"), { partal: "so far" }),
        "$.options.partal",
        /modelFailed has no option "partal" \(its options: metadata, partial\)/,
      ],
      [
        "toolCompleted meta",
        call("toolCompleted", tool, 1, { meta: {} }),
        "$.options.meta",
        /toolCompleted has no option "meta"/,
      ],
      ["toolFailed null", call("toolFailed", tool, new Error("x"), null), "$.options", /object/],
      ["retry metdata", call("retry", model, { metdata: {} }), "$.options.metdata", /retry/],
      [
        "checkpoint tag",
        call("checkpoint", { at: 1 }, { tag: "t" }),
        "$.options.tag",
        /checkpoint/,
      ],
      ["recordInput string", call("recordInput", "hi", "meta"), "$.options", /recordInput/],
      [
        // A record that was meant to supersede an earlier one superseded nothing.
        "recordEvidence keys",
        call("recordEvidence", { keys: "k", classification: "c", summary: "s", evidenceRefs: [] }),
        "$.keys",
        /recordEvidence has no option "keys"/,
      ],
      ["recordEvidence undefined", call("recordEvidence", undefined), "$", /recordEvidence/],
    ];
    await expectRefused(cases);
    expect(await readWholeSession(store, "s")).toEqual(before);
    // Spelt right, each is taken; a key left undefined (an optional spread) too.
    await recorder.modelCompleted(model, { text: "ok" }, { metadata: { a: 1 } });
    await recorder.toolFailed(tool, new Error("x"), { metadata: undefined });
    await recorder.checkpoint({ at: 1 }, { metadata: { tag: "t" } });
    await recorder.recordEvidence({
      key: "k",
      classification: "c",
      summary: "s",
      evidenceRefs: [],
    });
    const events = await readWholeSession(store, "s");
    expect(events.slice(before.length).map((event) => event.type)).toEqual([
      "model.completed",
      "tool.failed",
      "checkpoint.saved",
      "evidence.recorded",
    ]);
    expect(events.at(-4)?.metadata).toEqual({ a: 1 });
  });
});
