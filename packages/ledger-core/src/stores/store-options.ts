import { assertKnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import { isJsonObject } from "../events/json.js";

/** What a store's constructor takes: its options, and the two ways to give it a connection. */
export interface StoreOptionsShape {
  /** The class, leading every message (`PostgresEventStore`). */
  store: string;
  /** Every option it takes (`KnownKeys<its options>`). */
  known: Readonly<Record<string, true>>;
  /** The application's own connection, and what the store makes one from (`pool`, `uri`). */
  connection: readonly [own: string, made: string];
  /** Options to show in the message for options that are not an object. */
  example: string;
}

function shown(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null || value === undefined) return String(value);
  return typeof value === "string" ? `the string ${JSON.stringify(value)}` : `a ${typeof value}`;
}

/**
 * The options of a store's constructor, checked before anything connects: an object (a bare
 * path or URL was a `TypeError` from the `in` operator), no option the store does not take (a
 * misspelt `keyPrefix` put the ledger under the default prefix, beside another tenant's), and
 * not both connections (the one not used was ignored without a word).
 */
export function assertStoreOptions(
  options: unknown,
  shape: StoreOptionsShape,
): asserts options is object {
  const { store, known, connection, example } = shape;
  if (!isJsonObject(options))
    throw new InvalidArgumentError(
      "$",
      `${store} needs its options as an object, e.g. new ${store}(${example}), got ${shown(options)}`,
    );
  assertKnownKeys(options, known, store);
  if (connection.every((key) => (options as Record<string, unknown>)[key] !== undefined))
    throw new InvalidArgumentError(
      "$",
      `${store} needs exactly one of ${connection[0]} or ${connection[1]}: the other would be ignored`,
    );
}
