import { InvalidArgumentError } from "../events/errors.js";

/**
 * Refuses a query parameter of a server URL that is not in `known`: a typo (`?shema=`,
 * `?prefix=`) the driver would keep as an option nothing reads. `path` names the URL's argument
 * (`$.url`, `$.connectionString`); `server` says whose URL it is in the message, and `hint`
 * what there is to say of the parameter (what to write instead), if anything.
 */
export function assertKnownUrlParams(
  url: URL,
  known: readonly string[],
  path: string,
  server: string,
  hint?: (name: string) => string | undefined,
): void {
  for (const name of url.searchParams.keys()) {
    if (known.includes(name)) continue;
    const instead = hint?.(name);
    throw new InvalidArgumentError(
      path,
      `unknown query parameter ${JSON.stringify(name)} in the ${server} URL${instead === undefined ? "" : `: ${instead}`} (known: ${known.join(", ")})`,
    );
  }
}

/** A query parameter of a server URL whose value is a whole number within bounds. */
export interface WholeNumberParam {
  name: string;
  /** What the number counts, as the message says it ("milliseconds"). */
  unit: string;
  min: number;
  max: number;
  /** What the driver or server does with it, for the message. */
  use: string;
  /** A value to suggest. */
  example: number;
}

/**
 * Refuses a value of `params` in `url` that is not a whole number from its `min` to its `max`,
 * at `path`, before anything connects. The drivers pass such a value on unchecked: node-postgres
 * sends `String(parseInt(value))` to the server ("abc" as "NaN", "10s" as 10 ms), mysql2 and
 * ioredis hand it to a timer, which Node runs after 1 ms when it is negative or above
 * MAX_TIMER_MS. What then failed, at connect or at every statement, was told as the server
 * being unavailable: an outage to wait out, where the URL is what to change.
 */
export function assertWholeNumberUrlParams(
  url: URL,
  params: readonly WholeNumberParam[],
  path: string,
  server: string,
): void {
  for (const { name, unit, min, max, use, example } of params) {
    const value = url.searchParams.get(name);
    if (value === null) continue;
    const number = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (number >= min && number <= max) continue;
    throw new InvalidArgumentError(
      path,
      `${name}=${JSON.stringify(value)} in the ${server} URL is not a whole number of ${unit} from ${min} to ${max} (${use}): write it as one, such as ?${name}=${example}`,
      { details: { param: name, value } },
    );
  }
}
