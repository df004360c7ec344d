import { expect } from "vitest";

/** What `toThrow` (or `rejects.toThrow`) expects of a bad argument: `invalid-argument` at `path`, its message matching. */
export function invalidArgumentAt(path: string, message: RegExp) {
  return expect.objectContaining({
    code: "invalid-argument",
    path,
    message: expect.stringMatching(message),
  });
}
