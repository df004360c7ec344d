import { MemoryEventStore } from "@agent-ledger/core";
import { recordHandoffChain } from "@agent-ledger/core/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { CommandContext } from "./commands/context.js";
import { exportCommand } from "./commands/export.js";
import { inspectCommand } from "./commands/inspect.js";
import { CHUNK_CHARS, type OutputStream } from "./io.js";

const DEPTH = 5000;
const store = new MemoryEventStore();

beforeAll(async () => {
  await recordHandoffChain(store, "chain", DEPTH);
});

/**
 * A stdout that counts what it is given and keeps its first and last chunks only: indented,
 * the text of a tree 5,000 runs deep is billions of characters (2.4 G for inspect --json, 3.8 G
 * for ATIF), which no string holds. The chunks are ropes V8 has not copied: counting them is
 * cheap. `each` sees every chunk.
 */
function counter(each?: (chunk: string) => void) {
  const seen = { chars: 0, chunks: 0, largest: 0, first: "", last: "", beforeLast: "" };
  const stream: OutputStream = {
    write(chunk) {
      seen.chars += chunk.length;
      seen.largest = Math.max(seen.largest, chunk.length);
      if (seen.chunks++ === 0) seen.first = chunk;
      seen.beforeLast = seen.last;
      seen.last = chunk;
      each?.(chunk);
      return true;
    },
  };
  return { stream, seen, tail: () => `${seen.beforeLast}${seen.last}`.slice(-200) };
}

/** Runs `inspect` or `export` in this process on the chain's store. */
async function run(
  command: (context: CommandContext) => Promise<number>,
  args: string[],
  stdout: OutputStream,
) {
  let errors = "";
  const stderr: OutputStream = {
    write(chunk) {
      errors += chunk;
      return true;
    },
  };
  const code = await command({
    args,
    io: { stdout, stderr, env: {} },
    storeUrl: "memory:",
    storeSource: "flag",
    openStore: async () => store,
  });
  return { code, errors };
}

describe(`inspect and export of a chain of ${DEPTH} child runs`, () => {
  it("inspect prints the whole tree, the deepest run indented under all the others", async () => {
    // Each child run is the last item under its parent: three columns a level.
    const deepest = `\n${"   ".repeat(DEPTH - 1)}└─ agent-${DEPTH - 1} (r${DEPTH - 1})  RUNNING`;
    let found = false;
    const { stream, seen } = counter((chunk) => {
      // Written a line at a time: a line never straddles two chunks.
      found ||= chunk.includes(deepest);
    });
    expect(await run(inspectCommand, ["chain"], stream)).toEqual({ code: 0, errors: "" });
    expect(seen.first).toMatch(
      new RegExp(`^session chain  ${2 * DEPTH} events  ${DEPTH} runs  ${DEPTH} unresolved\\n`),
    );
    expect(found).toBe(true);
    expect(seen.last).toContain(`tool hand_off [c${DEPTH - 1}]  run r${DEPTH - 1} seq 1`);
  });

  it("inspect --json and export --format atif|otlp-json write it whole, never more than about a chunk at a time", async () => {
    const cases: [typeof inspectCommand, string[], RegExp, RegExp][] = [
      [
        inspectCommand,
        ["chain", "--json"],
        /^\{\n {2}"sessionId": "chain",\n {2}"eventCount": 10000,\n {2}"runs": \[\n {4}\{\n {6}"runId": "r0",/,
        /"attemptId": "[^"]+"\n {4}\}\n {2}\]\n\}\n$/,
      ],
      [
        exportCommand,
        ["chain", "--format", "atif"],
        /^\{\n {2}"schema_version": "ATIF-v1.7",\n {2}"session_id": "chain",\n {2}"trajectory_id": "r0",/,
        /\n {2}"notes": "Projected from agent-ledger session chain \(10000 events\)\."\n\}\n$/,
      ],
      [
        exportCommand,
        ["chain", "--format", "otlp-json"],
        /^\{\n {2}"resourceSpans": \[\n/,
        /\n {2}\]\n\}\n$/,
      ],
    ];
    for (const [command, args, head, end] of cases) {
      const { stream, seen, tail } = counter();
      expect(await run(command, args, stream), args.join(" ")).toEqual({ code: 0, errors: "" });
      expect(seen.first).toMatch(head);
      expect(tail()).toMatch(end);
      // Never the document's text as one string: chunks of a megabyte at most.
      expect(seen.largest).toBeLessThanOrEqual(CHUNK_CHARS);
      expect(seen.chunks).toBeGreaterThan(seen.chars / CHUNK_CHARS);
    }
  });
});
