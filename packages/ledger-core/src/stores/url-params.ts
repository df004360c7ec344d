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
