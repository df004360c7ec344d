import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { exampleRoot } from "./agent-process.js";

const scratch = scratchDirectory("langchain-agent-demo-", afterAll);

describe("npm run demo:langchain", () => {
  it("kills the agent inside send_email, names the call, settles it with the CLI, resumes with equal counts", async () => {
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
    expect(stdout).toContain("child process ended by SIGKILL");
    // The CLI's inspection, as the on-call person reads it.
    expect(stdout).toMatch(/tool send_email \[call-email\] {2}!! UNRESOLVED/);
    expect(stdout).toMatch(/the resume stops on unresolved-attempt \S+: a person decides/);
    expect(stdout).toMatch(/abandoned attempt \S+ \(tool send_email\) on run agent-run-1/);
    expect(stdout).toContain("get_weather: sunny in Paris");
    expect(stdout).toMatch(/no crash +model calls +3 +emails sent +1\n/);
    expect(stdout).toMatch(/crashed, then resumed +model calls +3 +emails sent +1\n/);
    expect(stdout).toContain("equal: no model call paid twice, no email sent twice.");
    expect(existsSync(join(dir, "crash", "ledger.db"))).toBe(true);
  });
});
