import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { exampleRoot } from "./agent-process.js";

const scratch = scratchDirectory("ai-sdk-agent-demo-", afterAll);

describe("npm run demo:ai-sdk", () => {
  it("kills streamText mid-stream, names the cut model call, resumes with equal counts", async () => {
    // The demo runs the compiled example: npm test builds it (tsc -b) before vitest.
    const demo = join(exampleRoot, "dist", "demo.js");
    if (!existsSync(demo)) throw new Error("build first: npm run build");
    const dir = join(scratch, "demo");
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [demo],
        { env: { ...process.env, AGENT_LEDGER_DEMO_DIR: dir, AGENT_LEDGER_STORE: "" } },
        (error, out, err) => {
          if (error) process.stderr.write(err);
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out });
        },
      );
    });
    expect(code).toBe(0);
    expect(stdout).toContain("child process ended by SIGKILL: 2 model calls answered");
    // The CLI's inspection, as the on-call person reads it: the third model call in flight.
    expect(stdout).toMatch(/└─ model scripted-1 {2}!! UNRESOLVED/);
    expect(stdout).toContain(
      "next: nothing to decide; the next resume makes this model call again",
    );
    expect(stdout).toMatch(
      /model calls made: 1 \(the one cut mid-stream.*answered from the ledger: 2\n/,
    );
    expect(stdout).toContain("tool effects repeated: 0;");
    expect(stdout).toMatch(/no crash +model calls answered +3 +lookups +1 +emails sent +1\n/);
    expect(stdout).toMatch(
      /crashed, then resumed +model calls answered +3 +lookups +1 +emails sent +1\n/,
    );
    expect(stdout).toContain("equal: the same answer, no tool effect repeated or lost");
    expect(existsSync(join(dir, "crash", "ledger.db"))).toBe(true);
  });
});
