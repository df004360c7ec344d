import { spawn } from "node:child_process";
import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "./session-fixture.test.data.js";

// `agent-ledger inspect s | head`: the reader closes the pipe long before the output ends.
describe("agent-ledger piped into a reader that stops early", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-pipe-", { beforeAll, afterAll }), "l.db")}`;

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    await store.append({
      sessionId: "long",
      runId: "run",
      expectedSeq: 0,
      events: [
        { type: "run.started", payload: {} },
        ...Array.from({ length: 3000 }, (_, index) => ({
          type: "input.received" as const,
          payload: { input: `message ${index} ${"x".repeat(200)}` },
        })),
      ],
    });
    await store.close();
  });

  for (const args of [
    ["tail", "long"],
    ["export", "long", "--format", "jsonl"],
  ])
    it(`${args.join(" ")} exits quietly, without a stack trace`, async () => {
      const child = spawn(process.execPath, [BIN, "--store", storeUrl, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      // Read one chunk, then close our end as `head` does.
      child.stdout.once("data", () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(stderr).toBe("");
      expect(code).toBe(0);
    });
});
