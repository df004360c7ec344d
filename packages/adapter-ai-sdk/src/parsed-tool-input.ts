import { asSchema, type Tool, type ToolSet } from "ai";

/** The tool of `tools` named `toolName` (own keys only: "toString" is not Object.prototype's). */
export function toolNamed(tools: ToolSet | undefined, toolName: string): Tool | undefined {
  return tools !== undefined && Object.hasOwn(tools, toolName) ? tools[toolName] : undefined;
}

/**
 * A tool call's input as the SDK parses the model's input before it runs the tool, or asks for
 * an approval: through the tool's `inputSchema` (defaults filled in, values transformed), an
 * empty input as `{}`. The SDK keeps that parsed input in the assistant message it gives back.
 * `given`: the model's input as the schema was given it. `undefined`: the schema refuses the
 * input (the SDK gave the model an input error instead).
 */
export async function parsedToolInput(
  tool: Tool,
  modelInput: unknown,
): Promise<{ given: unknown; input: unknown } | undefined> {
  const given = typeof modelInput === "string" && modelInput.trim() === "" ? {} : modelInput;
  const schema = asSchema(tool.inputSchema);
  if (!schema.validate) return { given, input: given };
  const parsed = await schema.validate(given);
  return parsed.success ? { given, input: parsed.value } : undefined;
}
