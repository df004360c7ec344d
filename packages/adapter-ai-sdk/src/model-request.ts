import {
  applyRedaction,
  DEFAULT_CREDENTIAL_PATHS,
  type JsonObject,
  type Redaction,
  validateRedaction,
  withoutCredentialKeys,
  withoutUrlCredentials,
} from "@agent-ledger/core";
import type {
  EmbeddingModelV3,
  EmbeddingModelV3CallOptions,
  LanguageModelV3,
  LanguageModelV3CallOptions,
} from "@ai-sdk/provider";
import { toJsonValue } from "./plain-json.js";

// Settings that change what the model answers. Never headers, abortSignal or credentials.
const SETTINGS = [
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "responseFormat",
  "seed",
  "tools",
  "toolChoice",
  "includeRawChunks",
  "providerOptions",
] as const satisfies readonly (keyof LanguageModelV3CallOptions)[];

/**
 * A middleware's `redact` option, checked once when the middleware is made: a malformed
 * redaction (one string instead of a list) would record every credential.
 */
export function redactOption(redact: Redaction | false | undefined): Redaction | false | undefined {
  return redact === false ? false : validateRedaction(redact, "$.redact");
}

/** The `model.requested` payload of a call: plain JSON, deterministic across re-executions. */
export function modelRequestOf(
  params: LanguageModelV3CallOptions,
  model: Pick<LanguageModelV3, "provider" | "modelId">,
  redact: Redaction | false = DEFAULT_CREDENTIAL_PATHS,
): JsonObject {
  const request: Record<string, unknown> = {
    model: { provider: model.provider, modelId: model.modelId },
    prompt: params.prompt,
  };
  for (const key of SETTINGS) if (params[key] !== undefined) request[key] = params[key];
  return recordedRequest(request, redact);
}

/** A request as plain JSON, redacted: what `model.requested` records and hashes. */
function recordedRequest(request: Record<string, unknown>, redact: Redaction | false): JsonObject {
  const plain = toJsonValue(request, "$.request") as JsonObject;
  if (redact === false) return plain;
  // Credentials in provider options (apiKey, token, headers...) never reach the ledger; the
  // paths are relative to the event payload, where the request sits under `request`.
  const redacted = (
    applyRedaction({ request: plain }, redact, { type: "model.requested" }) as {
      request: JsonObject;
    }
  ).request;
  // And every credential-looking key of the provider options, in any case or spelling, at any
  // depth (a gateway's BYOK secretAccessKey, a Vertex privateKey, X-API-Key): where credentials
  // are given. In the conversation (the prompt, an embedding's texts) keys are the app's own
  // names, but a URL's password or credential parameter is masked: a DSN a person pasted, a
  // signed URL. A request without one is recorded, and hashed, as before.
  const cleared = { ...redacted };
  for (const key of ["prompt", "values"] as const)
    if (cleared[key] !== undefined) cleared[key] = withoutUrlCredentials(cleared[key]);
  if (cleared.providerOptions !== undefined)
    cleared.providerOptions = withoutCredentialKeys(cleared.providerOptions);
  return cleared;
}

/**
 * The `model.requested` payload of an embedding call: `operation: "embeddings"` (what the
 * projections name the call by), the model, the texts and the provider options, redacted as a
 * language model's request is.
 */
export function embeddingRequestOf(
  params: EmbeddingModelV3CallOptions,
  model: Pick<EmbeddingModelV3, "provider" | "modelId">,
  redact: Redaction | false = DEFAULT_CREDENTIAL_PATHS,
): JsonObject {
  const request: Record<string, unknown> = {
    operation: "embeddings",
    model: { provider: model.provider, modelId: model.modelId },
    values: params.values,
  };
  if (params.providerOptions !== undefined) request.providerOptions = params.providerOptions;
  return recordedRequest(request, redact);
}
