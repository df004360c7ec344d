import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { scratchDirectory } from "./scratch-directory.js";

/** The hooks a runner is handed, run when the test says. */
function heldHooks() {
  const made: (() => void)[] = [];
  const removed: (() => void)[] = [];
  return {
    hooks: {
      beforeAll: (make: () => void) => made.push(make),
      afterAll: (remove: () => void) => removed.push(remove),
    },
    runBefore: () => {
      for (const make of made) make();
    },
    runAfter: () => {
      for (const remove of removed) remove();
    },
  };
}

describe("scratchDirectory", () => {
  it("given the runner's hooks, makes nothing until beforeAll runs (collecting a file runs no hook), and afterAll removes it", () => {
    const { hooks, runBefore, runAfter } = heldHooks();
    const directory = scratchDirectory("agent-ledger-scratch-hooks-", hooks);
    onTestFinished(runAfter);
    expect(dirname(directory)).toBe(tmpdir());
    expect(basename(directory)).toMatch(/^agent-ledger-scratch-hooks-/);
    expect(existsSync(directory)).toBe(false);

    runBefore();
    expect(readdirSync(directory)).toEqual([]);
    writeFileSync(join(directory, "ledger.db"), "");
    runAfter();
    expect(existsSync(directory)).toBe(false);
  });

  it("given one removing hook (inside a test), makes it at once and removes it when the hook runs", () => {
    let remove = () => {};
    const directory = scratchDirectory("agent-ledger-scratch-now-", (given) => {
      remove = given;
    });
    onTestFinished(() => remove());
    expect(readdirSync(directory)).toEqual([]);
    writeFileSync(join(directory, "ledger.db"), "");
    remove();
    expect(existsSync(directory)).toBe(false);
  });

  it("two directories of one prefix are two", () => {
    const first = heldHooks();
    const second = heldHooks();
    const one = scratchDirectory("agent-ledger-scratch-two-", first.hooks);
    const other = scratchDirectory("agent-ledger-scratch-two-", second.hooks);
    onTestFinished(() => {
      first.runAfter();
      second.runAfter();
    });
    expect(one).not.toBe(other);
    first.runBefore();
    second.runBefore();
    expect(existsSync(one) && existsSync(other)).toBe(true);
  });
});
