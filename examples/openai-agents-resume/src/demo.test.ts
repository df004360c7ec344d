import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { exampleRoot } from "./agent-process.js";

const scratch = scratchDirectory("oa-resume-demo-", afterAll);

describe("npm run demo:openai-agents", () => {
  it("kills the agent inside place_order, resumeRun hands the call back as an approval, counts equal", async () => {
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
    expect(stdout).toContain("child process ended by SIGKILL: 3 model calls answered");
    // The CLI's inspection, as the on-call person reads it, with the model's name.
    expect(stdout).toMatch(/└─ tool place_order \[call_order\] {2}!! UNRESOLVED/);
    expect(stdout).toMatch(/├─ model scripted-shop {2}completed/);
    expect(stdout).toContain(
      'it returns status "interrupted": place_order (call_order) as a tool-approval interruption',
    );
    expect(stdout).toContain("so it is approved (state.approve)");
    expect(stdout).toContain(
      "model calls made: 2 (the ones after the crash); warehouse notified again: 0",
    );
    expect(stdout).toContain('final output: "Receipt: order call_order placed: lamp for 42 EUR"');
    expect(stdout).toMatch(
      /no crash +model calls answered +5 +warehouse notices +1 +orders placed +1\n/,
    );
    expect(stdout).toMatch(
      /crashed, then resumed +model calls answered +5 +warehouse notices +1 +orders placed +1\n/,
    );
    expect(stdout).toContain("equal: no model call paid twice, the warehouse told once");
    expect(existsSync(join(dir, "crash", "ledger.db"))).toBe(true);
  });
});
