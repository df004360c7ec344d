import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEndedRun, fastLedger, startToFile } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-tail-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  await appendEndedRun(store, "s");
  await close();
});

/**
 * `agent-ledger tail s --follow`, Ctrl-C pressed once it printed the session: it ended with 0,
 * as if it had come to an end, where every other command Ctrl-C stops ends with 130.
 */
describe("agent-ledger tail --follow, interrupted", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    it(`ends with 130 at ${signal}, saying after which cursor`, async () => {
      const { child, exited, output, errors } = await startToFile(
        ["tail", "s", "--follow", "--interval", "20", "--store", `sqlite:${ledger}`],
        join(scratch, `tail-${signal}.txt`),
        /run\.completed\n$/,
      );
      child.kill(signal);
      expect(await exited, errors()).toBe(130);
      expect(errors()).toBe("agent-ledger: tail interrupted after cursor 2\n");
      expect(output().trimEnd().split("\n")).toHaveLength(2);
    }, 30_000);
});
