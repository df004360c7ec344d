import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_ID } from "./agent.js";
import {
  agentLedger,
  finalOf,
  exampleRoot as root,
  runAndKillInside,
  startAgent as start,
} from "./agent-process.js";

const scratch = scratchDirectory("langchain-agent-atif-", { beforeAll, afterAll });

interface Step {
  tool_calls?: { tool_call_id: string; extra?: { status?: string } }[];
  observation?: { results: { source_call_id?: string; content: string | null; extra?: object }[] };
}

describe("langchain-agent example: agent-ledger export --format atif after a crash and an abandon", () => {
  beforeAll(() => {
    if (!existsSync(join(root, "dist", "main.js"))) throw new Error("build first: npm run build");
  });

  it("gives the abandoned call's observation as the model read it, the reason beside it", async () => {
    const dir = mkdtempSync(join(scratch, "run-"));
    const db = join(dir, "ledger.db");
    expect((await runAndKillInside(["run", db, dir], "send_email")).signal).toBe("SIGKILL");
    const inspection = JSON.parse((await agentLedger(db, "inspect", SESSION_ID, "--json")).stdout);
    const { attemptId } = inspection.unresolved[0];
    const reason = "operator checked: the email went out";
    const resolved = await agentLedger(
      db,
      "resolve",
      "--abandon",
      reason,
      "--",
      SESSION_ID,
      attemptId,
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    const resumed = await start(["resume", db, dir]).done;
    expect(resumed.code).toBe(0);
    // The model's final answer quotes each tool message it read.
    const final = finalOf(resumed.stdout) as string;
    const read = /send_email: (.*); get_weather/.exec(final)?.[1];
    expect(read).toContain(reason);

    const exported = await agentLedger(db, "export", SESSION_ID, "--format", "atif");
    expect(exported.code, exported.stderr).toBe(0);
    const steps = JSON.parse(exported.stdout).steps as Step[];
    const asked = steps.find((step) => step.tool_calls?.[0]?.tool_call_id === "call-email");
    expect(asked?.tool_calls?.[0]?.extra?.status).toBe("abandoned");
    expect(asked?.observation?.results).toEqual([
      { source_call_id: "call-email", content: read, extra: { status: "abandoned", reason } },
    ]);
  });
});
