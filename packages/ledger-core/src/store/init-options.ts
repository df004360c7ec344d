import { assertOneOf, assertOptions, type KnownKeys } from "../events/argument-checks.js";
import type { InitOptions } from "./event-store.js";

// Its options, checked against the interface by the compiler.
const INIT_OPTIONS: KnownKeys<InitOptions> = { create: true, upgrade: true };

/**
 * `init`'s options, checked by every store before it touches anything: `{ creat: false }` or
 * `{ create: "false" }` (from an environment variable) read as the default would make the
 * ledger the caller asked not to make, or upgrade one agents of an older release still write.
 */
export function checkedInitOptions(options: unknown): InitOptions | undefined {
  if (options === undefined) return undefined;
  assertOptions(options, INIT_OPTIONS, "init", {
    at: "$",
    needs: "init's options are { create?, upgrade? }",
  });
  for (const name of Object.keys(INIT_OPTIONS))
    assertOneOf((options as Record<string, unknown>)[name], `$.${name}`, [true, false]);
  return options as InitOptions;
}
