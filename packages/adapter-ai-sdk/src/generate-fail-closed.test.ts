import { LedgerError, MemoryEventStore, StoreUnavailableError } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { eventsOf } from "./testing/recorded-events.test.data.js";
import {
  scriptedModel,
  assistantRecorder as setup,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

class FailingStore extends MemoryEventStore {
  failAppends = false;
  failType: string | undefined;
  override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
    if (this.failAppends || request.events.some((event) => event.type === this.failType))
      throw new StoreUnavailableError("disk on fire");
    return super.append(request);
  }
}

describe("fail closed", () => {
  it("a request that is not plain JSON is non-serializable with the exact path, and the provider is not called", async () => {
    const { store, recorder } = setup();
    const scripted = scriptedModel([textResult("never")]);
    const error = await generateText({
      model: wrapLanguageModel({
        model: scripted.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "hi",
      providerOptions: { acme: { budget: 10n } as never },
      maxRetries: 0,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "non-serializable")).toBe(true);
    expect((error as LedgerError).path).toBe("$.request.providerOptions.acme.budget");
    expect(scripted.calls).toBe(0);
    expect((await eventsOf(store)).map((event) => event.type)).toEqual(["run.started"]);
  });

  it("does not call the provider when model.requested cannot be committed", async () => {
    const store = new FailingStore();
    store.failAppends = true;
    const { recorder } = setup(store);
    const scripted = scriptedModel([textResult("never")]);
    const error = await generateText({
      model: wrapLanguageModel({
        model: scripted.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "hi",
      maxRetries: 2,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect(scripted.calls).toBe(0);
  });

  it("does not run a tool whose request cannot be committed, and refuses the next model call", async () => {
    const store = new FailingStore();
    const { recorder } = setup(store);
    const scripted = scriptedModel([
      toolCallsResult(toolCall("call-1", "send", { to: "bob" })),
      textResult("sent"),
    ]);
    let sent = 0;
    const tools = wrapTools(
      {
        send: tool({
          inputSchema: z.object({ to: z.string() }),
          execute: async () => {
            sent++;
            return "ok";
          },
        }),
      },
      { recorder },
    );
    store.failType = "tool.requested";
    const model = scripted.model;
    const error = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "send",
      tools,
      stopWhen: stepCountIs(3),
    }).catch((caught: unknown) => caught);
    expect(sent).toBe(0);
    expect(scripted.calls).toBe(1);
    const types = (await eventsOf(store)).map((event) => event.type);
    expect(types).toEqual(["run.started", "model.requested", "model.completed"]);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
  });
});
