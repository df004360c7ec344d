import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A test runner's hooks around a test file's (or a describe block's) tests, as vitest, jest
 * and mocha name them (mocha's `before`/`after` fit too).
 */
export interface ScratchHooks {
  beforeAll(make: () => void): unknown;
  afterAll(remove: () => void): unknown;
}

/**
 * A new empty directory in the OS temporary folder, removed with all it holds after the tests.
 * Tests that write SQLite files, logs and crashed children's state leave nothing behind on a CI
 * machine that runs them over and over.
 *
 * At a test file's top level or in a describe block, pass the runner's hooks
 * (`{ beforeAll, afterAll }`): the path is chosen at once, so it can be joined at the top level,
 * and the directory is made in `beforeAll`. A run that only collects the file's tests
 * (`vitest list`, which runs no hook) or filters all of them out then makes none, where a
 * directory made at once was left behind, its `afterAll` never run. Inside a test (or a hook),
 * pass the one hook that removes it (`onTestFinished` in vitest for one test's): it is made at
 * once.
 */
export function scratchDirectory(
  prefix: string,
  cleanup: ScratchHooks | ((remove: () => void) => unknown),
): string {
  if (typeof cleanup === "function") {
    const directory = mkdtempSync(join(tmpdir(), prefix));
    cleanup(() => removeDirectory(directory));
    return directory;
  }
  // mkdtemp's six random characters, chosen here because the path is handed out before it is
  // made; mkdirSync without `recursive` fails rather than share another's directory.
  const directory = join(tmpdir(), `${prefix}${randomBytes(6).toString("base64url")}`);
  cleanup.beforeAll(() => mkdirSync(directory, { mode: 0o700 }));
  cleanup.afterAll(() => removeDirectory(directory));
  return directory;
}

function removeDirectory(directory: string): void {
  rmSync(directory, { recursive: true, force: true, maxRetries: 3 });
}
