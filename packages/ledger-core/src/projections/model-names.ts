import type { JsonValue } from "../events/json.js";
import { assistantMessage, isObject, str } from "./extract.js";

// What a model call is known by in its recorded payloads (see extract.ts): the name of the model
// it ran on, and the provider's id of its response.

/** The model name a request (or response) names. */
export function modelNameOf(...values: (JsonValue | undefined)[]): string | undefined {
  for (const value of values) {
    if (!isObject(value)) continue;
    const direct = str(value.model) ?? str(value.modelId) ?? str(value.model_name);
    if (direct) return direct;
    if (isObject(value.model)) {
      const nested = str(value.model.modelId) ?? str(value.model.model) ?? str(value.model.name);
      if (nested) return nested;
    }
    for (const key of ["modelSettings", "settings", "options", "invocation_params", "response"]) {
      const inner = value[key];
      if (isObject(inner)) {
        const found = str(inner.model) ?? str(inner.modelId) ?? str(inner.model_name);
        if (found) return found;
      }
    }
    const message = assistantMessage(value);
    if (message && isObject(message.response_metadata)) {
      const found =
        str(message.response_metadata.model_name) ?? str(message.response_metadata.model);
      if (found) return found;
    }
  }
  return undefined;
}

/** The provider's id of a response (OpenAI Agents `responseId`, AI SDK `response.id`, a message id). */
export function responseIdOf(response: JsonValue | undefined): string | undefined {
  if (!isObject(response)) return undefined;
  const inner = isObject(response.response) ? response.response : {};
  return (
    str(response.id) ??
    str(response.responseId) ??
    str(inner.id) ??
    str(assistantMessage(response)?.id)
  );
}
