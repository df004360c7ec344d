import { Agent, handoff, tool } from "@openai/agents";
import { z } from "zod";
import { instrumentAgent } from "../instrument-agent.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** The context of the agents below: what a handoff's callback or an agent tool wrote. */
export interface DeskContext {
  ticket?: string;
  draft?: string;
}

// A tool that charges (not idempotent) for what the context holds, noting it in `effects`.
function chargeTool(effects: string[], afterEffect: AfterEffect | undefined) {
  return tool({
    name: "charge",
    description: "charge for the ticket and the draft the context holds",
    parameters: z.object({}),
    execute: async (_args, runContext) => {
      const { ticket, draft } = (runContext?.context ?? {}) as DeskContext;
      const effect = `charge ticket ${ticket} draft ${draft}`;
      effects.push(effect);
      await afterEffect?.(effect);
      return effect;
    },
  });
}

/**
 * "front" hands off to "billing" with `handoff(billing, { onHandoff })`, whose callback opens a
 * ticket and keeps it in the context (`ticket`); billing then calls `charge`, which reads it.
 * One scripted model answers both agents, in order.
 */
export function ticketHandoffAgents(afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const billing = new Agent<DeskContext>({
    name: "billing",
    tools: [chargeTool(effects, afterEffect)],
  });
  const front = new Agent<DeskContext>({
    name: "front",
    handoffs: [
      handoff(billing, {
        onHandoff: (runContext) => {
          runContext.context.ticket = "T-1";
        },
      }),
    ],
  });
  const model = new ScriptedModel([
    () => [functionCall("transfer_to_billing", {}, "call_handoff")],
    () => [functionCall("charge", {}, "call_charge")],
    () => [message("charged")],
  ]);
  return { effects, agent: front, model };
}

/**
 * "main" calls the agent "drafter" as a tool (Agent.asTool, instrumented), whose own tool
 * `keep_draft` keeps a draft in the run's context (the SDK runs drafter on main's context);
 * main then calls `charge`, which reads it.
 */
export function draftingAgents(afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const drafterModel = new ScriptedModel([
    () => [functionCall("keep_draft", {}, "call_keep")],
    () => [message("drafted")],
  ]);
  const drafter = instrumentAgent(
    new Agent<DeskContext>({
      name: "drafter",
      model: drafterModel,
      tools: [
        tool({
          name: "keep_draft",
          description: "keep a draft",
          parameters: z.object({}),
          execute: async (_args, runContext) => {
            (runContext?.context as DeskContext).draft = "D-1";
            return "kept";
          },
        }),
      ],
    }),
  );
  const main = new Agent<DeskContext>({
    name: "main",
    tools: [
      drafter.asTool({ toolName: "drafter_tool", toolDescription: "drafts" }),
      chargeTool(effects, afterEffect),
    ],
  });
  const model = new ScriptedModel([
    () => [functionCall("drafter_tool", { input: "draft" }, "call_drafter")],
    () => [functionCall("charge", {}, "call_charge")],
    () => [message("charged")],
  ]);
  return { effects, agent: main, model, drafterModel };
}
