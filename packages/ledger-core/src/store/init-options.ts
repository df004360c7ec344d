import { assertKnownKeys, assertOneOf } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import { isJsonObject } from "../events/json.js";
import type { InitOptions } from "./event-store.js";

// Its options, checked against the interface by the compiler.
const INIT_OPTIONS: Record<keyof InitOptions, true> = { create: true, upgrade: true };

/**
 * `init`'s options, checked by every store before it touches anything: `{ creat: false }` or
 * `{ create: "false" }` (from an environment variable) read as the default would make the
 * ledger the caller asked not to make, or upgrade one agents of an older release still write.
 */
export function checkedInitOptions(options: unknown): InitOptions | undefined {
  if (options === undefined) return undefined;
  if (!isJsonObject(options))
    throw new InvalidArgumentError("$", "init's options are { create?, upgrade? }");
  assertKnownKeys(options, INIT_OPTIONS, "init");
  for (const name of Object.keys(INIT_OPTIONS))
    assertOneOf(options[name], `$.${name}`, [true, false]);
  return options as InitOptions;
}
