import {
  Agent,
  hostedMcpTool,
  type ModelResponse,
  type Tool,
  tool,
  toolNamespace,
  toolSearchTool,
} from "@openai/agents";
import { z } from "zod";
import { ledgerTool } from "../ledger-tool.js";
import { branchDeletionTurns } from "./hosted-tool-agents.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

type OutputItem = ModelResponse["output"][number];

/** The run's context of the registry agents: the registry version their search noted in it. */
export interface RegistryContext {
  registry?: string;
}

// The model's search, as the SDK's Responses model gives a client tool_search_call.
const searchCall = (query: string): OutputItem =>
  ({
    type: "tool_search_call",
    id: "tsc_1",
    status: "completed",
    arguments: { query },
    providerData: { execution: "client", call_id: "call_search" },
  }) as OutputItem;

/**
 * An app's client tool search over a registry of `tools`: it counts its searches in `searches`
 * and notes the registry's `version` in the run's context (when the context is an object), as
 * an app keeps what its registry said for the tools it loaded.
 */
function registrySearch(tools: Tool[], version: string, searches: string[]) {
  return toolSearchTool({
    execution: "client",
    execute: async (args) => {
      searches.push(String((args.toolCall.arguments as { query?: unknown }).query));
      const context = args.runContext.context as RegistryContext | undefined;
      if (typeof context === "object" && context !== null) context.registry = version;
      return tools;
    },
  });
}

/**
 * An agent whose registry search loads a namespace (`toolNamespace`): `weather`, holding
 * `forecast`, which reads the registry version the search noted in the context. The model
 * searches, calls `weather.forecast`, then answers with what it gave. `forecasts` counts the
 * forecasts the process made; `version` is what this process's registry says. With
 * `forecastNeedsApproval`, a call of `forecast` waits for a person's approval.
 */
export function namespacedRegistryAgent(
  options: { version?: string; forecastNeedsApproval?: boolean } = {},
) {
  const made = { searches: [] as string[], forecasts: [] as string[] };
  const [forecast] = toolNamespace({
    name: "weather",
    description: "weather tools",
    tools: [
      tool({
        name: "forecast",
        description: "the weather forecast of a city",
        parameters: z.object({ city: z.string() }),
        needsApproval: options.forecastNeedsApproval === true,
        execute: async ({ city }, runContext) => {
          made.forecasts.push(city);
          const registry = (runContext?.context as RegistryContext | undefined)?.registry;
          return `sunny in ${city} (registry ${registry ?? "unknown"})`;
        },
      }),
    ],
  });
  const search = registrySearch(forecast ? [forecast] : [], options.version ?? "v1", made.searches);
  const model = new ScriptedModel([
    () => [searchCall("weather")],
    () => [
      { ...functionCall("forecast", { city: "Paris" }, "call_forecast"), namespace: "weather" },
    ],
    () => [message("sunny in Paris")],
  ]);
  const agent = new Agent<RegistryContext>({ name: "main", tools: [search] });
  return Object.assign(made, { model, agent });
}

/**
 * An agent whose registry search loads a hosted MCP server (`hostedMcpTool`, label `repo`, no
 * approval): the model searches, the provider calls the server's `list_branches` (an `mcp_call`
 * in the next response, the call the provider makes), then the model answers.
 */
export function mcpRegistryAgent() {
  const made = { searches: [] as string[] };
  const repo = hostedMcpTool({
    serverLabel: "repo",
    serverUrl: "https://mcp.invalid/repo",
    requireApproval: "never",
  });
  const search = registrySearch([repo], "v1", made.searches);
  const model = new ScriptedModel([
    () => [searchCall("branches")],
    () => [
      {
        type: "hosted_tool_call",
        id: "mcp_1",
        name: "mcp_call",
        status: "completed",
        output: "main, dev",
        providerData: {
          id: "mcp_1",
          type: "mcp_call",
          server_label: "repo",
          name: "list_branches",
          arguments: '{"repo":"ledger"}',
          output: "main, dev",
        },
      } as OutputItem,
    ],
    () => [message("main and dev")],
  ]);
  const agent = new Agent<RegistryContext>({ name: "main", tools: [search] });
  return Object.assign(made, { model, agent });
}

/**
 * An agent whose registry search loads two namespaces, `weather` and `climate`, each holding a
 * tool named `forecast` (they answer differently): the model searches, calls both forecasts in
 * one response (`call_weather`, `call_climate`, the same bare name and arguments, each in its
 * namespace, as the Responses API names them), then answers. `forecasts` counts the forecasts
 * the process made, as `namespace:city`. With `wrappedFirst`, the registry wraps each tool
 * with `ledgerTool` (a read, idempotent) before it puts it in its namespace.
 */
export function twoNamespacesRegistryAgent(options: { wrappedFirst?: boolean } = {}) {
  const made = { searches: [] as string[], forecasts: [] as string[] };
  const forecastIn = (namespace: string, weather: string) => {
    const forecast = tool({
      name: "forecast",
      description: `the ${namespace} forecast of a city`,
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        made.forecasts.push(`${namespace}:${city}`);
        return `${weather} in ${city}`;
      },
    });
    const tools = [
      options.wrappedFirst ? ledgerTool(forecast, { effect: "read", idempotent: true }) : forecast,
    ];
    return toolNamespace({ name: namespace, description: `${namespace} tools`, tools });
  };
  const tools = [...forecastIn("weather", "sunny"), ...forecastIn("climate", "mild")];
  const search = registrySearch(tools, "v1", made.searches);
  const model = new ScriptedModel([
    () => [searchCall("forecasts")],
    () => [
      { ...functionCall("forecast", { city: "Paris" }, "call_weather"), namespace: "weather" },
      { ...functionCall("forecast", { city: "Paris" }, "call_climate"), namespace: "climate" },
    ],
    () => [message("sunny and mild in Paris")],
  ]);
  const agent = new Agent<RegistryContext>({ name: "main", tools: [search] });
  return Object.assign(made, { model, agent });
}

/**
 * An agent whose registry search loads a hosted MCP server whose tools need approval
 * (`hostedMcpTool`, label `repo`, `requireApproval: "always"`): the model searches, then asks
 * to delete branch `old` and goes on as the person decided (`branchDeletionTurns`).
 */
export function approvingMcpRegistryAgent() {
  const made = { searches: [] as string[] };
  const repo = hostedMcpTool({
    serverLabel: "repo",
    serverUrl: "https://mcp.invalid/repo",
    requireApproval: "always",
  });
  const search = registrySearch([repo], "v1", made.searches);
  const model = new ScriptedModel([() => [searchCall("branches")], ...branchDeletionTurns()]);
  const agent = new Agent<RegistryContext>({ name: "main", tools: [search] });
  return Object.assign(made, { model, agent });
}
