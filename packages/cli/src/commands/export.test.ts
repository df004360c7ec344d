import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession, runBin } from "../session-fixture.test.data.js";

describe("agent-ledger export --output", () => {
  const directory = scratchDirectory("agent-ledger-export-", afterAll);
  const storeUrl = `sqlite:${join(directory, "ledger.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    await recordDemoSession(store, "export-output");
    await store.close();
  });

  it("writes the file", async () => {
    const output = join(directory, "trace.json");
    const result = await cli("export", "export-output", "--format", "otlp-json", "-o", output);
    expect(result.code).toBe(0);
    expect(JSON.parse(readFileSync(output, "utf8")).resourceSpans).toHaveLength(1);
  });

  it("exits 2 with a clear message when the file cannot be written", async () => {
    const output = join(directory, "no-such-directory", "trace.json");
    const result = await cli("export", "export-output", "--format", "atif", "--output", output);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`agent-ledger: cannot write ${output}: ENOENT`);
    expect(result.stderr).not.toContain("Unhandled 'error' event");
  });
});
