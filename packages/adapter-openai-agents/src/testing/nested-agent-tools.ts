import { Agent, type ModelRequest } from "@openai/agents";
import { instrumentAgent } from "../instrument-agent.js";
import { chargeTool } from "./charging-agents.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

// The text of the last tool result the model was sent (what the tool it called returned).
function lastToolOutput(request: ModelRequest): string {
  const input = Array.isArray(request.input) ? request.input : [];
  const result = [...input].reverse().find((item) => item.type === "function_call_result") as
    | { output?: unknown }
    | undefined;
  const output = result?.output;
  if (typeof output === "string") return output;
  const text = (output as { text?: unknown } | undefined)?.text;
  return typeof text === "string" ? text : JSON.stringify(output);
}

// A model that calls `toolName` once (callId `callId`), then answers `<prefix> done: <result>`.
function callingOnce(prefix: string, toolName: string, args: unknown, callId: string) {
  return new ScriptedModel([
    () => [functionCall(toolName, args, callId)],
    (request) => [message(`${prefix} done: ${lastToolOutput(request)}`)],
  ]);
}

/**
 * Agents used as tools two levels deep: "Outer" calls "Mid" as the tool `mid` (call co), Mid
 * calls "Inner" as the tool `inner` (call cm), Inner calls `charge` (call ci), whose charges go
 * to `effects`. Inner and Mid are instrumented as the README says; Outer's model is `model`.
 */
export function nestedAgentToolsFixture(
  options: { chargeNeedsApproval?: boolean; afterEffect?: AfterEffect } = {},
) {
  const effects: string[] = [];
  const charge = chargeTool(effects, options.afterEffect, {
    needsApproval: options.chargeNeedsApproval ?? false,
  });
  const innerModel = callingOnce("inner", "charge", { amount: 7 }, "ci");
  const inner = instrumentAgent(new Agent({ name: "Inner", tools: [charge], model: innerModel }));
  const midModel = callingOnce("mid", "inner", { input: "charge 7" }, "cm");
  const mid = instrumentAgent(
    new Agent({
      name: "Mid",
      model: midModel,
      tools: [inner.asTool({ toolName: "inner", toolDescription: "charges" })],
    }),
  );
  const model = callingOnce("outer", "mid", { input: "go" }, "co");
  const outer = new Agent({
    name: "Outer",
    tools: [mid.asTool({ toolName: "mid", toolDescription: "gets it charged" })],
  });
  return { effects, outer, model, midModel, innerModel };
}
