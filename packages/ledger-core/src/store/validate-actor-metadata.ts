import { InvalidArgumentError, InvalidEventError, type LedgerError } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import { childPath, type JsonObject, toPlainJson } from "../events/json.js";
import type { Actor } from "../events/types.js";

const actorTypes = new Set(["agent", "tool", "human", "system"]);

/**
 * The code a malformed actor or metadata is refused with: `invalid-event` where it is a field of
 * an event the caller built (`append`, a recorder's `record`), `invalid-argument` where it is a
 * caller's option (a recorder's `actor` and `metadata`, a call's `metadata`, who decided an
 * `abandon`). An actor's `id` is `invalid-event` either way, as every id is (DESIGN §6).
 */
export type ShapeRefusal = "invalid-event" | "invalid-argument";

function refusal(code: ShapeRefusal, path: string, message: string): LedgerError {
  return code === "invalid-argument"
    ? new InvalidArgumentError(path, message)
    : new InvalidEventError(path, message);
}

/** Validates an actor `{ type, id, framework? }`; returns a copy. */
export function validateActor(
  value: unknown,
  path: string,
  code: ShapeRefusal = "invalid-event",
): Actor {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw refusal(code, path, "actor must be an object { type, id, framework? }");
  }
  const actor = value as Record<string, unknown>;
  if (!actorTypes.has(actor.type as string)) {
    throw refusal(code, childPath(path, "type"), "actor type must be agent, tool, human or system");
  }
  assertId(actor.id, childPath(path, "id"));
  const out: Actor = { type: actor.type as Actor["type"], id: actor.id };
  if (actor.framework !== undefined) {
    assertId(actor.framework, childPath(path, "framework"));
    out.framework = actor.framework;
  }
  for (const key of Object.keys(actor)) {
    if (!["type", "id", "framework"].includes(key))
      throw refusal(code, childPath(path, key), "unknown actor field");
  }
  return out;
}

/**
 * Validates host metadata (a plain JSON object); returns a copy. A value inside it that is not
 * plain JSON is `non-serializable` at its path, whoever gave it.
 */
export function validateMetadata(
  value: unknown,
  path: string,
  code: ShapeRefusal = "invalid-event",
): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw refusal(code, path, "metadata must be a JSON object");
  }
  return toPlainJson(value, path) as JsonObject;
}
