import { fileURLToPath } from "node:url";
import { runTestChild } from "./run-child.js";

// The compiled child script: tests run from src, children run the built dist (`npx tsc -b`).
const writerScript = fileURLToPath(
  new URL("../../../../dist/stores/sql/testing/blob-writer.js", import.meta.url),
);

/**
 * Runs blob-writer.ts in a child process (the cross-process retention tests, retention-race and
 * collect-race); resolves with the refs its committed events name.
 */
export function runBlobWriter(argument: object): Promise<{ refs: string[] }> {
  return runTestChild(writerScript, argument, "blob writer");
}
