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
 * The name to record a call of `tool` under: as the model called it (`call`, the SDK's function
 * call item: its name in its namespace), else the tool's qualified name; unless the ledger holds
 * this call (`recorded`, found by its call id) under the tool's bare name. The adapter recorded a
 * namespaced tool's calls so before it named the namespace, and a resume of such a run must meet
 * each recorded call as it was recorded (the ledger compares the names of a call it answers).
 * The call names the namespace even where `tool` does not: a copy `toolNamespace` made of a tool
 * wrapped before records through the wrapper of the tool it copied.
 */
export function recordingName(
  tool: AnyFunctionTool,
  call: { name?: unknown; namespace?: unknown } | undefined,
  recorded: RecordedToolCall | undefined,
): string {
  const name =
    typeof call?.name === "string" && call.name.length > 0
      ? qualifiedCallName(call.name, call.namespace)
      : toolCallName(tool);
  return name !== tool.name && recorded?.name === tool.name ? tool.name : name;
}
