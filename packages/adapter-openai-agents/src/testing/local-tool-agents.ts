import { Agent, applyPatchTool, type ModelResponse, shellTool } from "@openai/agents";
import { instrumentAgent } from "../instrument-agent.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

type OutputItem = ModelResponse["output"][number];

/** The model's call of the shell: `./deploy.sh prod`. */
export const DEPLOY_CALL = {
  type: "shell_call",
  id: "sh_1",
  callId: "call_sh",
  status: "completed",
  action: { commands: ["./deploy.sh prod"] },
} as unknown as OutputItem;

/** The model's call of the editor: delete `prod.db`. */
export const DELETE_CALL = {
  type: "apply_patch_call",
  id: "ap_1",
  callId: "call_ap",
  status: "completed",
  operation: { type: "delete_file", path: "prod.db" },
} as unknown as OutputItem;

/**
 * An agent with a local shell that runs `./deploy.sh prod` once (noting each run in `effects`),
 * then answers with what it was told of it. `needsApproval`: the shell asks first; with
 * `autoApprove`, its `onApproval` approves every call it is asked about.
 */
export function deployingAgent(
  afterEffect?: AfterEffect,
  options: { needsApproval?: boolean; autoApprove?: boolean } = {},
) {
  const effects: string[] = [];
  const shell = shellTool({
    needsApproval: options.needsApproval ?? false,
    ...(options.autoApprove ? { onApproval: async () => ({ approve: true }) } : {}),
    shell: {
      run: async (action) => {
        const effect = `ran ${action.commands.join("; ")}`;
        effects.push(effect);
        await afterEffect?.(effect);
        return {
          output: [{ stdout: "deployed", stderr: "", outcome: { type: "exit", exitCode: 0 } }],
        };
      },
    },
  });
  const model = new ScriptedModel([
    () => [DEPLOY_CALL],
    (request) => [message(JSON.stringify(request.input.at(-1)))],
  ]);
  return { effects, model, agent: new Agent({ name: "ops", tools: [shell] }) };
}

/**
 * An agent whose editor deletes `prod.db` once (noting it in `effects`, and in the run's context
 * as `lastDeleted`), then says "done".
 */
export function cleaningAgent(afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const editor = applyPatchTool({
    editor: {
      createFile: async () => ({ status: "completed" }),
      updateFile: async () => ({ status: "completed" }),
      deleteFile: async (operation, editorContext) => {
        (editorContext?.runContext.context as { lastDeleted?: string }).lastDeleted =
          operation.path;
        const effect = `delete ${operation.path}`;
        effects.push(effect);
        await afterEffect?.(effect);
        return { status: "completed", output: "deleted" };
      },
    },
  });
  const model = new ScriptedModel([() => [DELETE_CALL], () => [message("done")]]);
  return { effects, model, agent: new Agent({ name: "dev", tools: [editor] }) };
}

/**
 * "main" calls the agent "ops" as a tool (Agent.asTool, `ops_tool`); ops (instrumented, its own
 * model `opsModel`) is deployingAgent: its shell runs `./deploy.sh prod` once, asking first
 * unless `needsApproval` is false. main answers "done" once ops answered.
 */
export function deployingAgentAsTool(
  afterEffect?: AfterEffect,
  options: { needsApproval?: boolean } = {},
) {
  const ops = deployingAgent(afterEffect, { needsApproval: options.needsApproval ?? true });
  ops.agent.model = ops.model;
  const main = new Agent({
    name: "main",
    tools: [
      instrumentAgent(ops.agent).asTool({ toolName: "ops_tool", toolDescription: "deploys" }),
    ],
  });
  const model = new ScriptedModel([
    () => [functionCall("ops_tool", { input: "deploy" }, "call_ops")],
    () => [message("done")],
  ]);
  return { effects: ops.effects, main, model, opsModel: ops.model };
}
