import { inspectSession, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runWithLedger } from "./index.js";
import { runOptions } from "./testing/recorded-run.js";
import { functionCall, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

/** "main" hands off to "receipt" (call_handoff); receipt's turns are `receiptTurns`. */
function handingOff(receiptTurns: ConstructorParameters<typeof ScriptedModel>[0]) {
  const note = tool({
    name: "note",
    description: "note a line",
    parameters: z.object({}),
    execute: async () => "noted",
  });
  const receipt = new Agent({ name: "receipt", tools: [note] });
  const main = new Agent({ name: "main", handoffs: [receipt] });
  const model = new ScriptedModel([
    () => [functionCall("transfer_to_receipt", {}, "call_handoff")],
    ...receiptTurns,
  ]);
  return { main, model };
}

describe("a run that fails inside a handoff target", () => {
  test("the target's child run fails with it, not left running", async () => {
    const store = new MemoryEventStore();
    const { main, model } = handingOff([
      () => {
        throw new Error("provider down");
      },
    ]);
    const failure = await runWithLedger(main, "go", runOptions(store, model)).catch(
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/provider down/);
    const [root] = (await inspectSession(store, "s")).runs;
    expect(root?.status).toBe("failed");
    expect(root?.children.map((child) => [child.actor?.id, child.status])).toEqual([
      ["receipt", "failed"],
    ]);
    const failed = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "run.failed",
    );
    for (const event of failed)
      expect(event.payload).toMatchObject({ error: { message: "provider down" } });
  });

  test("maxTurns exceeded after a handoff fails the target's child run too", async () => {
    const store = new MemoryEventStore();
    const { main, model } = handingOff(
      Array.from({ length: 5 }, (_, index) => () => [functionCall("note", {}, `call_${index}`)]),
    );
    const failure = await runWithLedger(main, "go", {
      ...runOptions(store, model),
      maxTurns: 2,
    }).catch((error: unknown) => error);
    expect((failure as Error).name).toBe("MaxTurnsExceededError");
    const [root] = (await inspectSession(store, "s")).runs;
    expect(root?.status).toBe("failed");
    expect(root?.children.map((child) => [child.actor?.id, child.status])).toEqual([
      ["receipt", "failed"],
    ]);
  });
});
