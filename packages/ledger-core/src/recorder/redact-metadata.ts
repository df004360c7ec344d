import { InvalidArgumentError } from "../events/errors.js";
import { isJsonObject, type JsonObject } from "../events/json.js";
import { validateMetadata } from "../store/validate-actor-metadata.js";
import type { RecorderState } from "./recorder-state.js";
import { type Redaction, reachesMetadata, redactPayload } from "./redact.js";

/**
 * An event's metadata as the recorder stores it under `redact`: the same redaction as its
 * payload, applied to `{ metadata }` (the recorder's metadata merged with the call's, and what
 * an adapter puts there: LangChain tags and thread ids, provider names). A path list reaches it
 * by paths that start `metadata.` (`metadata.langchain.tags`) or `**` (`**.email`); paths into a
 * payload field (`request.**.apiKey`) do not. A function is called with `{ metadata }` and a
 * context whose `part` is `"metadata"`, and returns `{ metadata }` with the object to keep. A
 * result without `metadata` is refused (`invalid-argument`), not taken for "store none": a
 * function written for one payload shape (`({ request }) => ({ request: scrub(request) })`)
 * would otherwise drop, without a word, what adapters keep there to answer a resume (how a
 * tool's output is decoded, which agent a handoff went to). The hash chain is taken of the event
 * as stored, so it covers what was kept.
 */
export function redactMetadata(
  redaction: Redaction,
  type: string,
  metadata: JsonObject,
): JsonObject {
  if (!reachesMetadata(redaction)) return metadata;
  const redacted = redactPayload({ metadata }, redaction, { type, part: "metadata" }, "object");
  const kept = isJsonObject(redacted) ? redacted.metadata : undefined;
  if (!isJsonObject(kept))
    throw new InvalidArgumentError(
      "$.redact",
      `a redaction must return the metadata of a ${type} event as { metadata: {...} } (the object to keep, {} for nothing), got ${kept === undefined ? "no metadata" : Array.isArray(kept) ? "an array" : kept === null ? "null" : typeof kept}: a redact function is called with each event's { metadata } too (context.part === "metadata")`,
    );
  return kept;
}

/**
 * The metadata an event of `type` is stored with by the recorder of `state`: the recorder's
 * merged with the event's own `metadata` (its keys last; undefined: the recorder's alone), then
 * redacted (`redactMetadata`). Both are validated copies (the recorder's when it was made, a
 * call's where the caller gave it), so nothing is validated here; neither is copied when there
 * is nothing to merge or redact.
 */
export function mergedMetadata(
  state: Pick<RecorderState, "metadata" | "redact">,
  type: string,
  metadata: JsonObject | undefined,
): JsonObject | undefined {
  const merged =
    metadata === undefined
      ? state.metadata
      : state.metadata === undefined
        ? metadata
        : { ...state.metadata, ...metadata };
  return merged === undefined || state.redact === undefined
    ? merged
    : redactMetadata(state.redact, type, merged);
}

/**
 * `SessionRecorder.metadataAsStored`: the caller's `metadata` checked as every call's is
 * (`invalid-argument` at `$.metadata`), then stored as `mergedMetadata` stores an event's.
 */
export function storedMetadata(
  state: Pick<RecorderState, "metadata" | "redact">,
  type: string,
  metadata: JsonObject,
): JsonObject {
  return mergedMetadata(
    state,
    type,
    validateMetadata(metadata, "$.metadata", "invalid-argument"),
  ) as JsonObject;
}
