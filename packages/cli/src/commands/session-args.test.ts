import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { recordDemoSession, runBin } from "../session-fixture.test.data.js";
import { collectBlobsHelp } from "./collect-blobs.js";
import { deleteHelp } from "./delete.js";
import { blobGraceOption, durationOption, formatDuration, numberOption } from "./session-args.js";

// An id is 1-255 characters without control characters (§6): anything else on the command line
// is bad usage (exit 2), like an unknown option, not a failed command (exit 1).
describe("agent-ledger with an id that cannot be an id", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-ids-", { beforeAll, afterAll }), "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);
  let attemptId = "";

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    attemptId = (await recordDemoSession(store, "ids")).unresolvedAttemptId;
    await store.close();
  });

  it("exits 2 and names the argument", async () => {
    const bad = "line\nbreak";
    const long = "x".repeat(256);
    for (const args of [
      ["inspect", bad],
      ["verify", long],
      ["tail", bad],
      ["export", long, "--format", "atif"],
      ["resolve", bad, attemptId, "--abandon", "r"],
      ["resolve", "ids", long, "--abandon", "r"],
      ["resolve", "ids", attemptId, "--abandon", "r", "--actor", bad],
      ["resolve", "ids", attemptId, "--abandon", "r", "--run", long],
      ["delete", bad, "--yes"],
      ["delete", "ids", "--yes", "--cancel-open", "r", "--actor", long],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/is not a valid id: 1-255 characters/);
    }
    const inspection = JSON.parse((await cli("inspect", "ids", "--json")).stdout);
    expect(inspection.unresolved).toHaveLength(1);
  });
});

// A number past Number.MAX_SAFE_INTEGER has no exact integer: `tail --from 99999999999999999999`
// was 1e20, which the store refused as its own `$.after` (exit 1). A wait past what a timer
// takes fired at once.
describe("agent-ledger with a numeric option out of range", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-numbers-", { beforeAll, afterAll }), "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    await recordDemoSession(store, "numbers");
    await store.close();
  });

  it("takes decimal digits only, and quotes a value it refuses", async () => {
    expect(numberOption("from", "007", 0, 0)).toBe(7);
    expect(numberOption("from", undefined, 5, 0)).toBe(5);
    for (const bad of ["0x0e", "", "1e3", "+5", " 5", "-0", "abc", "1.0"])
      expect(() => numberOption("limit", bad, 0, 1), bad).toThrow(
        expect.objectContaining({
          exitCode: 2,
          message: `--limit must be an integer >= 1 and <= 9007199254740991 (digits only), not ${JSON.stringify(bad)}`,
        }),
      );
    for (const from of ["0x0e", ""]) {
      const result = await cli("tail", "numbers", `--from=${from}`);
      expect(result.code, from).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`--from must be an integer >= 0`);
      expect(result.stderr).toContain(`not ${JSON.stringify(from)}`);
    }
  });

  it("exits 2 and names the option", async () => {
    const huge = "99999999999999999999";
    for (const [option, args] of [
      ["--from", ["tail", "numbers", "--from", huge]],
      ["--from", ["tail", "numbers", "--from", "9007199254740992"]],
      ["--limit", ["sessions", "--limit", huge]],
      ["--page-size", ["tail", "numbers", "--page-size", huge]],
      ["--interval", ["tail", "numbers", "--follow", "--interval", "2147483648"]],
      ["--poll-ms", ["serve", "--poll-ms", "2147483648"]],
    ] as const) {
      const result = await cli(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toContain(`${option} must be an integer >=`);
    }
    const last = await cli("tail", "numbers", "--from", "9007199254740991");
    expect(last.code).toBe(0);
    expect(last.stdout).toBe("");
  });
});

describe("durations on the command line", () => {
  it("reads a whole number of ms, s, m, h or d, and refuses the rest", () => {
    const read = (value: string | undefined) =>
      durationOption("blob-grace", value, { unit: "unless-zero" });
    expect(read(undefined)).toBeUndefined();
    expect(read("0")).toBe(0);
    expect(read("500ms")).toBe(500);
    expect(read("30s")).toBe(30_000);
    expect(read("10m")).toBe(600_000);
    expect(read("2h")).toBe(7_200_000);
    expect(read("1d")).toBe(86_400_000);
    for (const bad of ["", "-1", "1.5m", "10 min", "m", "1e3", "99999999999999999d", "600000"])
      expect(() => read(bad), bad).toThrow(
        expect.objectContaining({ code: "invalid-argument", exitCode: 2 }),
      );
    expect(durationOption("older-than", "30d", { unit: "required" })).toBe(2_592_000_000);
    expect(() => durationOption("older-than", "0", { unit: "required" })).toThrow(
      expect.objectContaining({ code: "invalid-argument", exitCode: 2 }),
    );
  });

  it("--blob-grace takes a bare number only as 0: 10 meant minutes, and read as 10 ms", async () => {
    expect(blobGraceOption("0")).toEqual({ blobGraceMs: 0 });
    expect(blobGraceOption("10m")).toEqual({ blobGraceMs: 600_000 });
    expect(() => blobGraceOption("10")).toThrow(
      expect.objectContaining({
        code: "invalid-argument",
        exitCode: 2,
        message: expect.stringContaining("--blob-grace needs a unit: 10m for minutes"),
      }),
    );
    // Through the command: nothing is collected.
    const ledger = join(scratchDirectory("agent-ledger-grace-", onTestFinished), "l.db");
    const refused = await runBin([
      "--store",
      `sqlite:${ledger}`,
      "collect-blobs",
      "--blob-grace",
      "600000",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--blob-grace needs a unit");
  });

  it("the --blob-grace values collect-blobs and delete list in their help are all taken", () => {
    for (const help of [collectBlobsHelp, deleteHelp]) {
      const listed = /\(default \w+; ([^:)]+)[:)]/.exec(help.replace(/\s+/g, " "))?.[1];
      expect(listed?.split(", ")).toEqual(["0", "500ms", "30s", "10m", "2h", "1d"]);
      for (const value of listed?.split(", ") ?? [])
        expect(() => blobGraceOption(value)).not.toThrow();
    }
  });

  it("prints a duration in its largest whole unit", () => {
    expect([0, 500, 1500, 30_000, 600_000, 5_400_000, 86_400_000].map(formatDuration)).toEqual([
      "0ms",
      "500ms",
      "1500ms",
      "30s",
      "10m",
      "90m",
      "1d",
    ]);
  });
});
