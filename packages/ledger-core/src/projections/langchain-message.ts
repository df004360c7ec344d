import { isJsonObject as isObject, type JsonValue } from "../events/json.js";

// LangChain message shapes, read by the tolerant payload readers in extract.ts.

export { isJsonObject as isObject } from "../events/json.js";

/**
 * LangChain serialises messages as `{ lc, type: "constructor", id: [..., "AIMessage"], kwargs }`,
 * and as StoredMessage `{ type: "human" | "ai" | "system" | "tool", data: { content, ... } }`
 * (what the LangChain adapter records).
 */
export function unwrapLangChain(value: JsonValue): JsonValue {
  if (isObject(value) && value.lc !== undefined && isObject(value.kwargs)) {
    const id = Array.isArray(value.id) ? value.id[value.id.length - 1] : undefined;
    return { ...value.kwargs, ...(typeof id === "string" ? { __class: id } : {}) };
  }
  if (
    isObject(value) &&
    typeof value.type === "string" &&
    isObject(value.data) &&
    value.data.content !== undefined
  )
    return { ...value.data, type: value.type };
  return value;
}

/** What a tool returned: the content of a LangChain ToolMessage, else the value itself. */
export function toolResultOf(result: JsonValue | undefined): JsonValue | undefined {
  if (result === undefined) return undefined;
  const unwrapped = unwrapLangChain(result);
  if (unwrapped === result || !isObject(unwrapped)) return result;
  const kind = String(unwrapped.type ?? unwrapped.__class ?? "").toLowerCase();
  return kind === "tool" || kind === "toolmessage" ? (unwrapped.content ?? null) : result;
}
