import {
  Agent,
  type ClientToolSearchExecutorArgs,
  type ModelResponse,
  type Tool,
  tool,
  toolSearchTool,
} from "@openai/agents";
import { z } from "zod";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

type OutputItem = ModelResponse["output"][number];

/**
 * An agent whose tools come from a registry its process searches (`toolSearchTool({ execution:
 * "client", execute })`): its model asks for a tool search (a client `tool_search_call`, as the
 * SDK's Responses model gives it), the app's `execute` looks the query up in the registry and
 * loads the `forecast` tool it finds, the model calls it, then answers with what it gave.
 * `beforeSearch` runs inside `execute` before it answers (a test looks at the ledger there, or
 * makes the registry fail); `searches` counts the searches the process made. With
 * `forecastNeedsApproval`, a call of `forecast` waits for a person's approval.
 */
export function registryAgent(options: { forecastNeedsApproval?: boolean } = {}) {
  const made = {
    searches: [] as string[],
    beforeSearch: undefined as ((args: ClientToolSearchExecutorArgs) => Promise<void>) | undefined,
  };
  const registry = new Map<string, Tool>([
    [
      "weather",
      tool({
        name: "forecast",
        description: "the weather forecast of a city",
        parameters: z.object({ city: z.string() }),
        needsApproval: options.forecastNeedsApproval === true,
        execute: async ({ city }) => `sunny in ${city}`,
      }),
    ],
  ]);
  const search = toolSearchTool({
    execution: "client",
    execute: async (args) => {
      const query = String((args.toolCall.arguments as { query?: unknown }).query);
      made.searches.push(query);
      await made.beforeSearch?.(args);
      return registry.get(query) ?? [];
    },
  });
  const model = new ScriptedModel([
    () =>
      [
        {
          type: "tool_search_call",
          id: "tsc_1",
          status: "completed",
          arguments: { query: "weather" },
          providerData: { execution: "client", call_id: "call_search" },
        },
      ] as OutputItem[],
    () => [functionCall("forecast", { city: "Paris" }, "call_forecast")],
    () => [message("sunny in Paris")],
  ]);
  const agent = new Agent({ name: "main", tools: [search] });
  return Object.assign(made, { model, agent });
}
