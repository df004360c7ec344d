import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The README's `npm run demo:<framework>` commands: each kills a framework's own agent in a
 * child process, inspects and resumes it, and must end with the counts of a run with no crash.
 * Each demo exits 1 when they differ. The lines checked are the story's steps as a reader sees
 * them.
 */
const root = fileURLToPath(new URL("../", import.meta.url));
const scripts = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;
const scratch = mkdtempSync(join(tmpdir(), "agent-ledger-framework-demos-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const demos: Record<string, (string | RegExp)[]> = {
  "demo:langchain": [
    "child process ended by SIGKILL",
    /tool send_email \[call-email\] {2}!! UNRESOLVED/,
    // The commands it ran, as printed: as they run in this repository (no agent-ledger on the
    // PATH), the reason quoted for a shell.
    /2\. What the ledger says: npm run agent-ledger -- --store \S+ inspect langchain-agent-example\n/,
    /the resume stops on unresolved-attempt \S+: a person decides/,
    /\n {3}npm run agent-ledger -- --store \S+ resolve --abandon 'operator checked: the email went out' -- langchain-agent-example \S+\n/,
    /abandoned attempt \S+ \(tool send_email\) on run agent-run-1/,
    "get_weather: sunny in Paris",
    /no crash +model calls +3 +emails sent +1\n/,
    /crashed, then resumed +model calls +3 +emails sent +1\n/,
    "equal: no model call paid twice, no email sent twice.",
  ],
  "demo:ai-sdk": [
    /2\. What the ledger says: npm run agent-ledger -- --store \S+ inspect order-42\n/,
    "child process ended by SIGKILL: 2 model calls answered",
    /└─ model scripted-1 {2}!! UNRESOLVED/,
    "next: nothing to decide; the next resume makes this model call again",
    /model calls made: 1 \(the one cut mid-stream.*answered from the ledger: 2\n/,
    "tool effects repeated: 0;",
    /no crash +model calls answered +3 +lookups +1 +emails sent +1\n/,
    /crashed, then resumed +model calls answered +3 +lookups +1 +emails sent +1\n/,
    "equal: the same answer, no tool effect repeated or lost",
  ],
  "demo:openai-agents": [
    "child process ended by SIGKILL: 3 model calls answered",
    /2\. What the ledger says: npm run agent-ledger -- --store \S+ inspect lamp-order\n/,
    /└─ tool place_order \[call_order\] {2}!! UNRESOLVED/,
    /├─ model scripted-shop {2}completed/,
    'it returns status "interrupted": place_order (call_order) as a tool-approval interruption',
    "finds no order from call_order in its log, so it approves it (state.approve)",
    "model calls made: 2 (the ones after the crash); warehouse notified again: 0",
    'final output: "Receipt: order call_order placed: lamp for 42 EUR"',
    /no crash +model calls answered +5 +warehouse notices +1 +orders placed +1\n/,
    /crashed, then resumed +model calls answered +5 +warehouse notices +1 +orders placed +1\n/,
    "equal: no model call paid twice, the warehouse told once, one order placed.",
  ],
};

describe("npm run demo:<framework>", () => {
  it("every demo:* script of package.json is checked here", () => {
    expect(Object.keys(scripts).filter((name) => name.startsWith("demo:"))).toEqual(
      Object.keys(demos),
    );
  });

  it.each(Object.entries(demos))("%s tells its crash story and ends equal", async (name, steps) => {
    // What the script runs after its build (npm test builds first, with tsc -b).
    const program = /^tsc -b && node (\S+)$/.exec(scripts[name] ?? "")?.[1];
    expect(program, `${name}: "tsc -b && node <file>"`).toBeDefined();
    const file = join(root, program as string);
    if (!existsSync(file)) throw new Error("build first: npm run build");
    const dir = join(scratch, name.replace(":", "-"));
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [file],
        { env: { ...process.env, AGENT_LEDGER_DEMO_DIR: dir, AGENT_LEDGER_STORE: "" } },
        (error, out, err) => {
          if (error) process.stderr.write(err);
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out });
        },
      );
    });
    expect(code, stdout).toBe(0);
    for (const step of steps)
      if (typeof step === "string") expect(stdout).toContain(step);
      else expect(stdout).toMatch(step);
    expect(existsSync(join(dir, "crash", "ledger.db"))).toBe(true);
  });
});
