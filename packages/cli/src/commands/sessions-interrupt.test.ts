import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerOfSessions, nthSession, startToFile } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-sessions-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
/** Twelve pages of 500: several hundred ms to list after the first. */
const SESSIONS = 6000;

const id = nthSession;

beforeAll(() => ledgerOfSessions(ledger, SESSIONS), 60_000);

/**
 * `agent-ledger sessions > list.txt` on a ledger of 160,000 sessions, and Ctrl-C: on SQLite
 * with stdout to a file nothing gave the event loop a turn, so the listing ran to its end.
 */
describe("agent-ledger sessions, interrupted", () => {
  it("stops between pages at Ctrl-C with exit 130; what was printed stays, in order", async () => {
    const { child, exited, output, errors } = await startToFile(
      ["sessions", "--store", `sqlite:${ledger}`],
      join(scratch, "sessions.txt"),
      /^SESSION .*\n(?:s-\d{5} .*\n)+/,
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const said = /^agent-ledger: sessions interrupted after listing (\d+) session\(s\)\n$/.exec(
      errors(),
    );
    expect(said, errors()).not.toBeNull();
    const listed = Number(said?.[1]);
    // Whole pages of 500, and not all of them.
    expect(listed % 500).toBe(0);
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThan(SESSIONS);
    const [header, ...rows] = output().trimEnd().split("\n");
    expect(header).toMatch(/^SESSION +EVENTS +CREATED +UPDATED$/);
    expect(rows.map((row) => row.split(" ")[0])).toEqual(
      Array.from({ length: listed }, (_, index) => id(index)),
    );
  }, 60_000);
});
