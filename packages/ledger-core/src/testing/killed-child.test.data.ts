import { killAtMarker } from "./crash-child.js";

/**
 * Runs `script` (an ES module's source) in a child Node process with `args`, and kills it with
 * SIGKILL as soon as it prints the line `marker`. Resolves once it is dead.
 */
export async function runUntilKilled(
  script: string,
  args: string[],
  marker: string,
): Promise<void> {
  await killAtMarker(["--input-type=module", "-e", script, ...args], marker);
}
