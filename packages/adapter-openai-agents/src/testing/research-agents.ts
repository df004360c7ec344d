import { Agent, type ModelRequest, tool } from "@openai/agents";
import { z } from "zod";
import { instrumentAgent } from "../instrument-agent.js";
import { chargeTool } from "./charging-agents.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel, type ScriptedTurn } from "./scripted-model.js";

/** The output the SDK gave the model for the call `callId`, as text (undefined before). */
export function outputOf(request: ModelRequest, callId: string): string | undefined {
  const items = request.input as { callId?: string; output?: { text?: string } | string }[];
  const output = items.find((item) => item.callId === callId && item.output !== undefined)?.output;
  return typeof output === "string" ? output : output?.text;
}

// A scripted model that answers every call with `turn` (its script never runs out).
function steadyModel(turn: ScriptedTurn): ScriptedModel {
  return new ScriptedModel(Array.from({ length: 20 }, () => turn));
}

// The topic an agent used as a tool was given (`{ input }`, the last user message).
function topicOf(request: ModelRequest): string {
  const items = request.input as { role?: string; content?: unknown }[];
  const asked = items.filter((item) => item.role === "user").at(-1)?.content;
  return typeof asked === "string" ? asked : JSON.stringify(asked);
}

/**
 * "boss" calls the agent "research" as a tool (Agent.asTool) on "lamps" (call_r1), then,
 * with `chargeBetween`, charges 7 (`charge` needs approval), then calls research on
 * `secondTopic` (call_r2) and answers with both results joined by " | ".
 *
 * research answers `facts #<n> on <topic>`, n counting the answers its model gave in this
 * process. With `search`, it first calls its own tool `search` (not idempotent) on the topic;
 * searches are appended to `effects` as `search <topic>`.
 */
export function researchFixture(
  options: {
    secondTopic?: string;
    chargeBetween?: boolean;
    search?: boolean;
    afterEffect?: AfterEffect;
  } = {},
) {
  const effects: string[] = [];
  let answers = 0;
  const researchModel = steadyModel((request) => {
    const topic = topicOf(request);
    const callId = `call_search_${topic.replace(/\W/g, "")}`;
    if (options.search && outputOf(request, callId) === undefined)
      return [functionCall("search", { topic }, callId)];
    return [message(`facts #${++answers} on ${topic}`)];
  });
  const search = tool({
    name: "search",
    description: "search the web (a paid query)",
    parameters: z.object({ topic: z.string() }),
    execute: async ({ topic }) => {
      effects.push(`search ${topic}`);
      await options.afterEffect?.(`search ${topic}`);
      return `results on ${topic}`;
    },
  });
  const research = instrumentAgent(
    new Agent({ name: "research", model: researchModel, tools: options.search ? [search] : [] }),
  );
  const charge = chargeTool(effects, undefined, { needsApproval: true });
  const second = options.secondTopic ?? "lamps";
  const model = steadyModel((request) => {
    if (outputOf(request, "call_r1") === undefined)
      return [functionCall("research", { input: "lamps" }, "call_r1")];
    if (options.chargeBetween && outputOf(request, "call_charge") === undefined)
      return [functionCall("charge", { amount: 7 }, "call_charge")];
    const secondOutput = outputOf(request, "call_r2");
    if (secondOutput === undefined) return [functionCall("research", { input: second }, "call_r2")];
    return [message(`${outputOf(request, "call_r1")} | ${secondOutput}`)];
  });
  const boss = new Agent({
    name: "boss",
    tools: [
      research.asTool({ toolName: "research", toolDescription: "researches a topic" }),
      charge,
    ],
  });
  return { effects, boss, model, researchModel };
}

/**
 * "boss" calls the agent "writer" as a tool twice (call_w1 on "first", then call_w2 on
 * "second"), then answers with both results. Every call of writer's tool `write` needs
 * approval, so writer pauses on each call. Writes are appended to `effects`.
 */
export function twoWritesFixture() {
  const effects: string[] = [];
  const writerModel = steadyModel((request) => {
    const topic = topicOf(request);
    const callId = `call_write_${topic.replace(/\W/g, "")}`;
    if (outputOf(request, callId) === undefined)
      return [functionCall("write", { text: topic }, callId)];
    return [message(`written ${topic}`)];
  });
  const write = tool({
    name: "write",
    description: "write a text",
    parameters: z.object({ text: z.string() }),
    needsApproval: true,
    execute: async ({ text }) => {
      effects.push(`write ${text}`);
      return "ok";
    },
  });
  const writer = instrumentAgent(new Agent({ name: "writer", tools: [write], model: writerModel }));
  const model = steadyModel((request) => {
    const first = outputOf(request, "call_w1");
    if (first === undefined) return [functionCall("writer", { input: "first" }, "call_w1")];
    const second = outputOf(request, "call_w2");
    if (second === undefined) return [functionCall("writer", { input: "second" }, "call_w2")];
    return [message(`${first} | ${second}`)];
  });
  const boss = new Agent({
    name: "boss",
    tools: [writer.asTool({ toolName: "writer", toolDescription: "writes texts" })],
  });
  return { effects, boss, model, writerModel };
}
