import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isSerializableSchema } from "@langchain/core/utils/standard_schema";
import { isInteropZodSchema } from "@langchain/core/utils/types";
import { ProviderStrategy } from "langchain";
import { isRecord } from "./plain-json.js";

/**
 * How createAgent's structured output is asked as a tool call (`toolStrategy`), as
 * ledgerMiddleware knows it before the call: by the names of its tools (`tools`). A bare schema's
 * tool is named at each call, after the schema's title, or, without one, `extract-<n>`
 * (`generated`: any tool so named, but the agent's own, `agentTools`, which its tool node runs).
 */
export interface StructuredOutputNote {
  tools: string[];
  /** A bare schema without a title: its tool is the one createAgent names `extract-<n>`. */
  generated?: boolean;
  agentTools?: string[];
}

/**
 * How a `responseFormat` asks for a structured output as a tool call: `toolStrategy`, by the
 * names of the tools it binds (`ToolStrategy.name`, its `tool.function.name`); a bare schema,
 * which createAgent turns into a strategy at each call (a tool named then, or the provider's own
 * structured output), by the name createAgent gives its tool (`schemaToolName`). None for
 * `providerStrategy` (no tool call).
 */
export function structuredOutputNote(
  responseFormat: unknown,
  agentTools: readonly unknown[] | undefined,
): StructuredOutputNote | undefined {
  if (responseFormat === undefined || responseFormat === null) return undefined;
  const formats = Array.isArray(responseFormat) ? responseFormat : [responseFormat];
  const tools: string[] = [];
  let bare = false;
  let generated = false;
  for (const format of formats) {
    if (format instanceof ProviderStrategy) return undefined;
    const tool = isRecord(format) && "schema" in format ? format.tool : undefined;
    const definition = isRecord(tool) ? tool.function : undefined;
    if (isRecord(definition) && typeof definition.name === "string") {
      tools.push(definition.name);
      continue;
    }
    bare = true;
    const name = schemaToolName(format);
    if (name === undefined) generated = true;
    else tools.push(name);
  }
  if (!bare) return tools.length > 0 ? { tools } : undefined;
  return { tools, generated, agentTools: (agentTools ?? []).flatMap(toolName) };
}

/** A bare schema's tool name as createAgent gives it (`ToolStrategy.fromSchema`), by schema. */
const schemaToolNames = new WeakMap<object, string | undefined>();

/**
 * The name createAgent gives a bare schema's tool: the schema's title (for a function definition
 * `{ name, parameters }`, its name); none when it has none, and createAgent names it
 * `extract-<n>`.
 */
function schemaToolName(schema: unknown): string | undefined {
  if (!isRecord(schema) && typeof schema !== "function") return undefined;
  const key = schema as object;
  if (schemaToolNames.has(key)) return schemaToolNames.get(key);
  let name: unknown;
  if (isSerializableSchema(schema) || isInteropZodSchema(schema)) {
    const json = toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) as { title?: unknown };
    name = json.title;
  } else if (isRecord(schema)) {
    name =
      typeof schema.name === "string" && isRecord(schema.parameters) ? schema.name : schema.title;
  }
  const known = typeof name === "string" ? name : undefined;
  schemaToolNames.set(key, known);
  return known;
}

/** A tool's name: a StructuredTool's, or an OpenAI-style definition's; none for others. */
function toolName(tool: unknown): string[] {
  if (!isRecord(tool)) return [];
  const name = tool.name ?? (isRecord(tool.function) ? tool.function.name : undefined);
  return typeof name === "string" ? [name] : [];
}
