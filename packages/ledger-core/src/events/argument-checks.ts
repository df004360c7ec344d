import { InvalidArgumentError } from "./errors.js";
import { childPath, isJsonObject } from "./json.js";

/**
 * `invalid-argument` at `path` unless `value` is an object (not null, an array or a bare id),
 * where a call reads fields of it: from JavaScript (no types to stop it) a missing argument was
 * a bare `TypeError` reading a field of undefined, where every other bad input is a
 * `LedgerError` naming it (§6).
 */
export function assertObjectArgument(
  value: unknown,
  path: string,
  message: string,
): asserts value is object {
  if (!isJsonObject(value)) throw new InvalidArgumentError(path, message);
}

/**
 * Every key an options object (or a store request) of type `T` may hold, as `{ [key]: true }`:
 * typed so, the compiler has the list name each key `T` declares, and a new one is not refused.
 */
export type KnownKeys<T> = { readonly [K in KeysOf<T>]: true };

/** The keys of `T`, of every member when `T` is a union (`{ path } | { database }`). */
type KeysOf<T> = T extends unknown ? keyof T : never;

/**
 * The first key of `value` that `known` does not hold, or undefined. A key set to undefined is
 * let through: an optional spread leaves one, and it sets nothing.
 */
export function unknownKey(
  value: object,
  known: Readonly<Record<string, true>>,
): string | undefined {
  for (const key of Object.keys(value))
    if (!Object.hasOwn(known, key) && (value as Record<string, unknown>)[key] !== undefined)
      return key;
  return undefined;
}

/**
 * `invalid-argument` at `$.<key>` for a key of `options` not in `known`: a misspelt option
 * (`redcat` for `redact`) was dropped without a word, and what it was meant to do not done.
 * `what` leads the message ("a recorder", "child").
 */
export function assertKnownKeys(
  options: object,
  known: Readonly<Record<string, true>>,
  what: string,
  /** The options' own path, when they are not the call's one argument (`$.options`). */
  base = "$",
): void {
  const key = unknownKey(options, known);
  if (key !== undefined)
    throw new InvalidArgumentError(
      childPath(base, key),
      `${what} has no option ${JSON.stringify(key)} (its options: ${Object.keys(known).join(", ")})`,
    );
}

/** Where `assertOptions` reports, and what it says of options that are not an object. */
export interface OptionsPlace {
  /** The options' path (default `$.options`: they follow the call's other arguments). */
  at?: string;
  /** What a misspelt key's path is under (default `at`; `$` where the call's other option errors are rooted there). */
  keysAt?: string;
  /** The message for options that are not an object (default: the keys `known` lists). */
  needs?: string;
}

/**
 * `invalid-argument` unless `options` is an object holding only keys of `known`: at `at` for a
 * value that is not an object (`null` was a bare TypeError reading a field of it), at
 * `<keysAt>.<key>` for a misspelt key, whose option was otherwise dropped without a word.
 */
export function assertOptions(
  options: unknown,
  known: Readonly<Record<string, true>>,
  what: string,
  place: OptionsPlace = {},
): asserts options is object {
  const at = place.at ?? "$.options";
  assertObjectArgument(
    options,
    at,
    place.needs ?? `${what} takes its options as an object ({ ${Object.keys(known).join(", ")} })`,
  );
  assertKnownKeys(options, known, what, place.keysAt ?? at);
}

/** The message for an attempt argument that is not one, as `doing` (e.g. "completing") needs. */
export function attemptNeeded(doing: string): string {
  return `${doing} an attempt needs the attempt (as before* returned it, an unresolved-attempt error carries it, or inspectSession lists it), not its id`;
}

/**
 * `invalid-argument` at `path` unless `value` is undefined (the default) or one of `allowed`:
 * an option set to what it does not take (`create: "false"` from an environment variable) was
 * read as the default, or as true, where the caller meant the opposite.
 */
export function assertOneOf(value: unknown, path: string, allowed: readonly unknown[]): void {
  if (value === undefined || allowed.includes(value)) return;
  const shown =
    typeof value === "string" || typeof value === "number"
      ? JSON.stringify(value)
      : value === null
        ? "null"
        : `a ${typeof value}`;
  throw new InvalidArgumentError(
    path,
    `expected ${allowed.map((choice) => JSON.stringify(choice)).join(" or ")}, got ${shown}`,
  );
}
