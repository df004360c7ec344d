import { join } from "node:path";
import {
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { Agent, RunContext, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { instrumentAgent } from "./instrument-agent.js";
import { resumeRun, runWithLedger } from "./run-with-ledger.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { mcpShop, serverCalls } from "./testing/mcp-agents.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";
import { ledgerToolEffect } from "./tool-effects.js";

setTracingDisabled(true);

// The MCP server is real (testing/mcp-server.ts, spawned by the SDK's MCPServerStdio) and logs
// every call it answers to a file: what reached it is read there, across processes. Crashes are
// real too: the first process runs in a child SIGKILLed right after the server made the charge,
// before the call's outcome was recorded (testing/crash-scenarios.test.data.ts).
const directory = scratchDirectory("oa-mcp-tools-", { beforeAll, afterAll });
const ledgers = new CrashedLedgers("oa-mcp-crash-", { beforeAll, afterAll });
const CHARGED = "mcp shop: dies after the server made the charge";
ledgers.prepare(CHARGED);
let files = 0;

// The shop with a connected server logging to `log`, closed when the test ends.
async function connectedShop(log: string) {
  const shop = mcpShop(log);
  await shop.server.connect();
  onTestFinished(() => shop.server.close());
  return shop;
}

// The ledger the killed child left, what its server answered, and a log for the next process's.
async function crashedAfterCharge() {
  const { store, first } = await ledgers.crashed(CHARGED);
  expect(first.effects).toEqual(["lookup", "charge"]);
  return { store, log: join(directory, `calls-${++files}.log`) };
}

// Each tool event with the name of its call (a request names it, an outcome has its attempt).
function toolEvents(events: LedgerEvent[]) {
  const names = new Map<string, string | undefined>();
  return events
    .filter((event) => event.type.startsWith("tool."))
    .map((event) => {
      if (event.type === "tool.requested")
        names.set(String(event.attemptId), (event.payload as { name?: string }).name);
      return [event.type, names.get(String(event.attemptId))];
    });
}

describe("the tools of an agent's MCP servers", () => {
  test("a call is recorded before it reaches the server and completed with what the model saw", async () => {
    const store = new MemoryEventStore();
    const log = join(directory, `calls-${++files}.log`);
    const shop = await connectedShop(log);
    const requestedBeforeCall: boolean[] = [];
    shop.server.afterCall = async () => {
      // The server has answered; the call's request was committed before it was sent.
      const events = await readWholeSession(store, "s");
      requestedBeforeCall.push(
        events.filter((event) => event.type === "tool.requested").length ===
          serverCalls(log).length,
      );
    };
    const result = await runWithLedger(shop.agent, "sell a book", runOptions(store, shop.model));
    expect(result.finalOutput).toBe("sold");
    expect(serverCalls(log)).toEqual(["lookup book", "charge 7"]);
    expect(requestedBeforeCall).toEqual([true, true]);

    const events = await readWholeSession(store, "s");
    expect(toolEvents(events)).toEqual([
      ["tool.requested", "lookup"],
      ["tool.completed", "lookup"],
      ["tool.requested", "charge"],
      ["tool.completed", "charge"],
    ]);
    const chargeRequested = events.find(
      (event) =>
        event.type === "tool.requested" && (event.payload as { name: string }).name === "charge",
    );
    // Unknown, and not idempotent: the server's idempotentHint is not believed.
    expect(chargeRequested?.payload).toMatchObject({
      toolCallId: "call_charge",
      name: "charge",
      args: { amount: 7 },
      effect: { kind: "unknown", idempotent: false },
    });
    // An extension to the OpenTelemetry export (gen_ai.tool.type), a function tool's a function.
    expect(chargeRequested?.metadata).toMatchObject({ toolType: "extension" });
    const spans = await exportedSpans(store, "s");
    const toolType = (name: string) =>
      spans.find((span) => span.name === `execute_tool ${name}`)?.attributes["gen_ai.tool.type"];
    expect([toolType("lookup"), toolType("charge")]).toEqual(["extension", "extension"]);
    const chargeCompleted = events.find(
      (event) => event.type === "tool.completed" && event.attemptId === chargeRequested?.attemptId,
    );
    // The tool's output (the server's one content item), which the SDK gave the model as text;
    // a replay hands the SDK the same output, so the model sees the same (a resume checks it).
    expect(chargeCompleted?.payload).toMatchObject({
      result: { type: "text", text: "charged 7" },
    });
    const seen = shop.model.requests[2]?.input as { type?: string; callId?: string }[];
    expect(
      seen.find((item) => item.type === "function_call_result" && item.callId === "call_charge"),
    ).toMatchObject({ output: [{ type: "input_text", text: "charged 7" }] });
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("crash after the server made the charge: the resume makes no call again and asks about the charge", async () => {
    const { store, log } = await crashedAfterCharge();
    const next = await connectedShop(log);
    const paused = await resumeRun(next.agent, runOptions(store, next.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    // The lookup was answered from the ledger and the charge not made again.
    expect(serverCalls(log)).toEqual([]);
    expect(next.model.calls).toBe(0);

    // A person checks and approves: the charge is made once more, and the run completes.
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    next.model.calls = 2;
    const done = await resumeRun(next.agent, { ...runOptions(store, next.model), state });
    expect(done.status).toBe("completed");
    expect(done.finalOutput).toBe("sold");
    expect(serverCalls(log)).toEqual(["charge 7"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("crash after the charge, declared idempotent with mcpToolEffect: it is made again by itself", async () => {
    const { store, log } = await crashedAfterCharge();
    const next = await connectedShop(log);
    next.model.calls = 2;
    const declared: string[] = [];
    const done = await resumeRun(next.agent, {
      ...runOptions(store, next.model),
      mcpToolEffect: ({ name }) => {
        declared.push(name);
        return name === "charge" ? { effect: "write", idempotent: true } : undefined;
      },
    });
    expect(done.status).toBe("completed");
    expect(serverCalls(log)).toEqual(["charge 7"]);
    expect(declared).toContain("charge");
    const events = await readWholeSession(store, "s");
    const charges = events.filter(
      (event) =>
        event.type === "tool.requested" && (event.payload as { name: string }).name === "charge",
    );
    // The crashed request says what the first process declared; its retry, what this one does.
    expect(charges.map((event) => (event.payload as { effect: unknown }).effect)).toEqual([
      { kind: "unknown", idempotent: false },
      { kind: "write", idempotent: true },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("mcpToolEffect is checked: not a function, at its path; a bad answer, before the model is called", async () => {
    const store = new MemoryEventStore();
    const log = join(directory, `calls-${++files}.log`);
    const shop = await connectedShop(log);
    await expect(
      runWithLedger(shop.agent, "go", {
        ...runOptions(store, shop.model),
        mcpToolEffect: "read" as never,
      }),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.mcpToolEffect" });
    expect(() => instrumentAgent(shop.agent, { mcpToolEfect: () => undefined } as never)).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.mcpToolEfect" }),
    );
    await expect(
      runWithLedger(shop.agent, "go", {
        ...runOptions(store, shop.model),
        runId: "bad-answer",
        mcpToolEffect: () => ({ effect: "delete" }) as never,
      }),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.mcpToolEffect" });
    expect(shop.model.calls).toBe(0);
    expect(serverCalls(log)).toEqual([]);
  });
});

describe("an agent with MCP servers used as a tool (Agent.asTool)", () => {
  test("instrumented, its child run says it records every call; its MCP call is recorded there", async () => {
    const store = new MemoryEventStore();
    const log = join(directory, `calls-${++files}.log`);
    const shop = await connectedShop(log);
    const model = new ScriptedModel([
      () => [functionCall("shop_tool", { input: "price of a book" }, "call_shop")],
      () => [functionCall("lookup", { item: "book" }, "call_lookup")],
      () => [message("7")],
      () => [message("it costs 7")],
    ]);
    const main = new Agent({
      name: "main",
      tools: [
        instrumentAgent(shop.agent).asTool({ toolName: "shop_tool", toolDescription: "a shop" }),
      ],
    });
    const result = await runWithLedger(main, "how much is a book?", runOptions(store, model));
    expect(result.finalOutput).toBe("it costs 7");
    expect(serverCalls(log)).toEqual(["lookup book"]);
    const events = await readWholeSession(store, "s");
    const shopRun = events.find(
      (event) =>
        event.type === "run.started" &&
        (event.payload as { asToolOf?: unknown }).asToolOf === "shop_tool",
    );
    expect(shopRun?.payload).toMatchObject({ recordsEveryCall: true });
    expect(toolEvents(events.filter((event) => event.runId === shopRun?.runId))).toEqual([
      ["tool.requested", "lookup"],
      ["tool.completed", "lookup"],
    ]);
  });
});

describe("how the MCP tools are wrapped", () => {
  test("by their names as the model sees them: prefixed with the server's when the agent says so", async () => {
    const shop = await connectedShop(join(directory, `calls-${++files}.log`));
    const agent = instrumentAgent(
      new Agent({
        name: "shop",
        mcpServers: [shop.server],
        mcpConfig: { includeServerInToolNames: true },
      }),
      {
        mcpToolEffect: ({ name }) => (name === "mcp_shop__lookup" ? { effect: "read" } : undefined),
      },
    );
    const tools = await agent.getMcpTools(new RunContext());
    expect(tools.map((tool) => [tool.name, ledgerToolEffect(tool)])).toEqual([
      ["mcp_shop__lookup", { kind: "read", idempotent: false }],
      ["mcp_shop__charge", { kind: "unknown", idempotent: false }],
    ]);
  });

  test("a copy made with clone() after instrumentAgent wraps them too, with the same declaration", async () => {
    const shop = await connectedShop(join(directory, `calls-${++files}.log`));
    instrumentAgent(shop.agent, {
      mcpToolEffect: ({ name }) => (name === "lookup" ? { idempotent: true } : undefined),
    });
    const copy = shop.agent.clone({ name: "shop copy" });
    const tools = await copy.getMcpTools(new RunContext());
    expect(tools.map((tool) => [tool.name, ledgerToolEffect(tool)])).toEqual([
      ["lookup", { kind: "unknown", idempotent: true }],
      ["charge", { kind: "unknown", idempotent: false }],
    ]);
  });
});
