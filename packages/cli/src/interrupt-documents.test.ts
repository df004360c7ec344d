import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type EventStore, MemoryEventStore, type NewEvent } from "@agent-ledger/core";
import { recordHandoffChain, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandContext } from "./commands/context.js";
import { exportCommand } from "./commands/export.js";
import { inspectCommand } from "./commands/inspect.js";
import { EXIT_CODES } from "./errors.js";
import type { OutputStream } from "./io.js";
import { withReadSession } from "./store.js";

const scratch = scratchDirectory("cli-interrupt-documents-", { beforeAll, afterAll });
const store = new MemoryEventStore();
// Three pages of inspect's reads (5,000 events a page).
const LONG_EVENTS = 12_000;

beforeAll(async () => {
  for (let seq = 0; seq < LONG_EVENTS; seq += 1000) {
    const events = Array.from(
      { length: 1000 },
      (_, index): NewEvent =>
        seq + index === 0
          ? { type: "run.started", actor: { type: "agent", id: "a" }, payload: {} }
          : { type: "x.note", payload: { note: `note ${seq + index}` } },
    );
    await store.append({ sessionId: "long", runId: "r", expectedSeq: seq, events });
  }
  // Its inspection and exports are many chunks long.
  await recordHandoffChain(store, "chain", 1000);
});

function collector(onWrite?: () => void) {
  const chunks: string[] = [];
  const stream: OutputStream = {
    write(chunk) {
      chunks.push(chunk);
      onWrite?.();
      return true;
    },
  };
  return { stream, chunks };
}

/** Runs `command` in this process on `ledger`, stopped by `signal` (Ctrl-C in bin.ts). */
async function run(
  command: (context: CommandContext) => Promise<number>,
  args: string[],
  options: { ledger?: EventStore; signal: AbortSignal; stdout: OutputStream },
) {
  const stderr = collector();
  const code = await command({
    args,
    io: { stdout: options.stdout, stderr: stderr.stream, env: {}, signal: options.signal },
    storeUrl: "memory:",
    storeSource: "flag",
    openStore: async () => options.ledger ?? store,
  });
  return { code, errors: stderr.chunks.join("") };
}

/**
 * The store, Ctrl-C pressed while its second page of the session is read: the signal's handler
 * runs on a later turn of the event loop, as SIGINT's does. The reads of a memory store (as
 * SQLite's) complete at once, so a command that gives the loop no turn between pages never sees
 * the signal, and reads on to the end.
 */
function pressedWhileReading(controller: AbortController): EventStore {
  let reads = 0;
  return withReadSession(store, (request, readSession) => {
    // The first read is the check that the session exists.
    if (++reads === 3) setImmediate(() => controller.abort());
    return readSession(request);
  });
}

describe("inspect and export --format atif|otlp-json at Ctrl-C", () => {
  it("inspect stops while it reads the session, as export does: exit 130, nothing printed", async () => {
    for (const json of [[], ["--json"]]) {
      const controller = new AbortController();
      const stdout = collector();
      const result = await run(inspectCommand, ["long", ...json], {
        ledger: pressedWhileReading(controller),
        signal: controller.signal,
        stdout: stdout.stream,
      });
      expect(result).toEqual({
        code: EXIT_CODES.interrupted,
        errors: "agent-ledger: inspect interrupted while reading the session\n",
      });
      expect(stdout.chunks).toEqual([]);
    }
  });

  it("inspect (text and --json) and export atif and otlp-json stop between the chunks they write", async () => {
    const cases: [typeof inspectCommand, string[], string][] = [
      [inspectCommand, ["chain"], "inspect"],
      [inspectCommand, ["chain", "--json"], "inspect"],
      [exportCommand, ["chain", "--format", "atif"], "export"],
      [exportCommand, ["chain", "--format", "otlp-json"], "export"],
    ];
    for (const [command, args, name] of cases) {
      // Ctrl-C as the first chunk is written.
      const controller = new AbortController();
      const stdout = collector(() => controller.abort());
      const result = await run(command, args, { signal: controller.signal, stdout: stdout.stream });
      expect(result, args.join(" ")).toEqual({
        code: EXIT_CODES.interrupted,
        errors: `agent-ledger: ${name} interrupted while writing\n`,
      });
      expect(stdout.chunks).toHaveLength(1);
      // Not stopped, the same command writes more than that.
      const whole = collector();
      const done = await run(command, args, {
        signal: new AbortController().signal,
        stdout: whole.stream,
      });
      expect(done.code).toBe(0);
      expect(whole.chunks.length).toBeGreaterThan(2);
      expect(whole.chunks[0]).toBe(stdout.chunks[0]);
    }
  });

  it("export --output stops while it reads the session, leaving the file as it was and no temporary", async () => {
    for (const format of ["atif", "otlp-json"]) {
      const output = join(scratch, `long.${format}.json`);
      writeFileSync(output, "PREVIOUS EXPORT\n");
      const controller = new AbortController();
      const result = await run(exportCommand, ["long", "--format", format, "-o", output], {
        ledger: pressedWhileReading(controller),
        signal: controller.signal,
        stdout: collector().stream,
      });
      expect(result).toEqual({
        code: EXIT_CODES.interrupted,
        errors: `agent-ledger: export interrupted while reading the session: ${output} left as it was\n`,
      });
      expect(readFileSync(output, "utf8")).toBe("PREVIOUS EXPORT\n");
      expect(readdirSync(scratch).filter((name) => name.startsWith(`.long.${format}`))).toEqual([]);
    }
  });
});
