import { getToolSearchRuntimeToolKey } from "@openai/agents";
import type { RecordedToolCall } from "./scope.js";
import type { AnyFunctionTool } from "./tool-effects.js";

// A function tool in a namespace (`toolNamespace`, which a client tool search may load) is called
// by the model with its bare name and its namespace beside it (`{ name: "forecast", namespace:
// "weather" }`); two namespaces may each hold a tool of the same name. The ledger names such a
// call as the SDK does where it shows one (its display name, its tool search's keys):
// `weather.forecast`, so each call's tool is told apart wherever the ledger is read (inspect,
// ATIF, OpenTelemetry read the recorded name). A deferred top-level tool is called in a
// namespace of its own name: that is its plain name.

/** A function call's name qualified by its namespace: `namespace.name`, or `name` alone. */
export function qualifiedCallName(name: string, namespace: unknown): string {
  return typeof namespace === "string" && namespace.length > 0 && namespace !== name
    ? `${namespace}.${name}`
    : name;
}

/** The name a function tool's calls are recorded under: qualified by its namespace, if any. */
export function toolCallName(tool: AnyFunctionTool): string {
  return getToolSearchRuntimeToolKey(tool) ?? tool.name;
}

/**
 * The name to record a call of `tool` under: its qualified name, unless the ledger holds this
 * call (`recorded`, found by its call id) under the tool's bare name. The adapter recorded a namespaced tool's calls so
 * before it named the namespace, and a resume of such a run must meet each recorded call as it
 * was recorded (the ledger compares the names of a call it answers): matched by its call id, the
 * call keeps its recorded name.
 */
export function recordingName(
  tool: AnyFunctionTool,
  recorded: RecordedToolCall | undefined,
): string {
  const name = toolCallName(tool);
  return name !== tool.name && recorded?.name === tool.name ? tool.name : name;
}
