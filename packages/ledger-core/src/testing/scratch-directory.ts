import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A new empty directory in the OS temporary folder, removed with all it holds when `cleanup`
 * runs the function it is handed. Pass the test runner's hook: `afterAll` for a directory a
 * test file shares, `onTestFinished` (vitest) for one test's. Tests that write SQLite files,
 * logs and crashed children's state leave nothing behind on a CI machine that runs them over
 * and over.
 */
export function scratchDirectory(prefix: string, cleanup: (remove: () => void) => unknown): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  cleanup(() => rmSync(directory, { recursive: true, force: true, maxRetries: 3 }));
  return directory;
}
