import type { JsonObject, JsonValue } from "@agent-ledger/core";
import { isRecord } from "./plain-json.js";
import type { StructuredOutputNote } from "./structured-output-note.js";

/**
 * The name createAgent gives a structured output's tool whose schema has no title: `extract-<n>`,
 * n counting the tools it named in the process (a bare schema's at each model call,
 * `toolStrategy(schema)`'s when it is built). LangChain itself tells those tools by this prefix.
 */
export const GENERATED_NAME = /^extract-(\d+)$/;

/** What a model request of createAgent's structured output is recorded and matched as. */
export interface StableToolNames {
  /** The request, its generated tool names replaced by `extract-<n>`, `extract-<n+1>`... */
  request: JsonObject;
  /** The names replaced, in the order of those placeholders (empty: the request as it came). */
  generated: string[];
}

/**
 * A model call's request with the tool names createAgent generated for its structured output
 * (`note`, from ledgerMiddleware) replaced, in its params (where the bound tools are), by names
 * that do not depend on what the process did before: `extract-<n>` for the lowest, then
 * `extract-<n+1>`... The same call made in another process (a resume) then has the same request,
 * and the same hash, as the one recorded. The messages are left as they are: a name in them is
 * one of an earlier turn's, from the state, the same in every process.
 */
export function withStableToolNames(
  request: JsonObject,
  note: StructuredOutputNote,
): StableToolNames {
  const params = request.params;
  const generated = [...generatedNames(params, note)].sort(
    (one, other) => number(one) - number(other),
  );
  if (generated.length === 0) return { request, generated };
  const placeholders = new Map(
    generated.map((name, index) => [name, index === 0 ? "extract-<n>" : `extract-<n+${index}>`]),
  );
  const replaced = (value: JsonValue): JsonValue => {
    if (typeof value === "string") return placeholders.get(value) ?? value;
    if (Array.isArray(value)) return value.map(replaced);
    if (isRecord(value))
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [key, replaced(inner as JsonValue)]),
      );
    return value;
  };
  return { request: { ...request, params: replaced(params ?? null) }, generated };
}

/**
 * The generated names (`extract-<n>`, see GENERATED_NAME) of the structured output's tools in
 * `params`: those `toolStrategy` named (built from an untitled schema); for a bare schema without
 * a title (its tool named at the call), any that is none of the agent's own tools.
 */
function generatedNames(params: JsonValue | undefined, note: StructuredOutputNote): Set<string> {
  const found = new Set<string>();
  const named = new Set(note.tools);
  const agentTools = new Set(note.agentTools ?? []);
  const visit = (value: JsonValue | undefined): void => {
    if (typeof value === "string") {
      if (
        GENERATED_NAME.test(value) &&
        !agentTools.has(value) &&
        (note.generated === true || named.has(value))
      )
        found.add(value);
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (isRecord(value)) for (const inner of Object.values(value)) visit(inner as JsonValue);
  };
  visit(params);
  return found;
}

const number = (name: string): number => Number(GENERATED_NAME.exec(name)?.[1] ?? 0);
