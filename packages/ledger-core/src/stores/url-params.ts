import { InvalidArgumentError } from "../events/errors.js";

/**
 * Refuses a query parameter of a server URL that is not in `known`: a typo (`?shema=`,
 * `?prefix=`) the driver would keep as an option nothing reads. `path` names the URL's argument
 * (`$.url`, `$.connectionString`); `server` says whose URL it is in the message.
 */
export function assertKnownUrlParams(
  url: URL,
  known: readonly string[],
  path: string,
  server: string,
): void {
  for (const name of url.searchParams.keys()) {
    if (!known.includes(name))
      throw new InvalidArgumentError(
        path,
        `unknown query parameter ${JSON.stringify(name)} in the ${server} URL (known: ${known.join(", ")})`,
      );
  }
}
