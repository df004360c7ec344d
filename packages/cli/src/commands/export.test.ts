import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { recordDemoSession, recordGapSession, runBin } from "../session-fixture.test.data.js";

describe("agent-ledger export --output", () => {
  const directory = scratchDirectory("agent-ledger-export-", { beforeAll, afterAll });
  const storeUrl = `sqlite:${join(directory, "ledger.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    await recordDemoSession(store, "export-output");
    await store.close();
  });

  it("writes the file", async () => {
    const output = join(directory, "trace.json");
    const result = await cli("export", "export-output", "--format", "otlp-json", "-o", output);
    expect(result.code).toBe(0);
    // An intact session: no warning.
    expect(result.stderr).toBe("");
    expect(JSON.parse(readFileSync(output, "utf8")).resourceSpans).toHaveLength(1);
  });

  it("leaves the file that was there as it was when the export fails, and no temporary file", async () => {
    // A session whose long message was kept in the blob store, then lost: every format exits 3.
    const lostUrl = `sqlite:${join(directory, "lost.db")}`;
    const store = await openStore(lostUrl);
    const recorder = new SessionRecorder({
      store,
      sessionId: "lost",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeModelCall({
      request: {
        model: "m",
        messages: [{ role: "user", content: "Refund order 42. ".repeat(200) }],
      },
    });
    await store.close();
    const database = new Database(join(directory, "lost.db"));
    expect(database.prepare("DELETE FROM blobs").run().changes).toBeGreaterThan(0);
    database.close();

    const output = join(directory, "kept.json");
    writeFileSync(output, "PREVIOUS GOOD EXPORT\n");
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const result = await runBin([
        "--store",
        lostUrl,
        "export",
        "lost",
        "--format",
        format,
        "-o",
        output,
      ]);
      expect(result.code, format).toBe(3);
      expect(readFileSync(output, "utf8"), format).toBe("PREVIOUS GOOD EXPORT\n");
    }
    expect(readdirSync(directory).filter((name) => name.includes("kept"))).toEqual(["kept.json"]);
    // A complete export replaces it.
    const replaced = await cli("export", "export-output", "--format", "atif", "-o", output);
    expect(replaced.code).toBe(0);
    expect(JSON.parse(readFileSync(output, "utf8")).session_id).toBe("export-output");
    expect(readdirSync(directory).filter((name) => name.includes("kept"))).toEqual(["kept.json"]);
  });

  it("otlp-json gives the same ids on every export, so a backend importing twice sees one trace", async () => {
    const first = await cli("export", "export-output", "--format", "otlp-json");
    const second = await cli("export", "export-output", "--format", "otlp-json");
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    // The ids are renamed everywhere: every parent and link names a span of the document.
    const spans = JSON.parse(first.stdout).resourceSpans[0].scopeSpans[0].spans as {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      links: { traceId: string; spanId: string }[];
    }[];
    const spanIds = new Set(spans.map((span) => span.spanId));
    expect(spanIds.size).toBe(spans.length);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const links = spans.flatMap((span) => span.links);
    expect(links.length).toBeGreaterThan(0);
    for (const id of [
      ...spans.flatMap((span) => span.parentSpanId ?? []),
      ...links.map((link) => link.spanId),
    ])
      expect(spanIds).toContain(id);
    expect(links.map((link) => link.traceId)).toEqual(links.map(() => spans[0]?.traceId));
  });

  it("otlp-json is the session whole whatever OTEL_* variables the shell sets", async () => {
    const plain = await cli("export", "export-output", "--format", "otlp-json");
    // Variables an operator's shell may hold for an instrumented app: none may sample spans out
    // or cut their attributes here.
    const shell = {
      OTEL_TRACES_SAMPLER: "always_off",
      OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: "3",
      OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "4",
      OTEL_SPAN_LINK_COUNT_LIMIT: "0",
    };
    const result = await runBin(
      ["--store", storeUrl, "export", "export-output", "--format", "otlp-json"],
      shell,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(plain.stdout);
    expect(JSON.parse(result.stdout).resourceSpans[0].scopeSpans[0].spans.length).toBeGreaterThan(
      2,
    );
  });

  it("refuses --raw with a projection (exit 2): a trajectory or spans are made from the content, never raw", async () => {
    for (const format of ["atif", "otlp-json"]) {
      const output = join(directory, `raw-${format}.json`);
      const result = await cli(
        "export",
        "export-output",
        "--format",
        format,
        "--raw",
        "-o",
        output,
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--raw applies to --format jsonl only");
      expect(readdirSync(directory)).not.toContain(`raw-${format}.json`);
    }
  });

  it("exits 2 with a clear message when the file cannot be written", async () => {
    const output = join(directory, "no-such-directory", "trace.json");
    const result = await cli("export", "export-output", "--format", "atif", "--output", output);
    expect(result.code).toBe(2);
    // The user's path, not the temporary file the export writes first beside it.
    expect(result.stderr).toBe(
      `agent-ledger: cannot write ${output}: ENOENT: no such file or directory, open '${output}'\n`,
    );
  });
});

describe("agent-ledger export of a run that is not intact", () => {
  it("exports it as it reads, warning on stderr as inspect --json does, in every format", async () => {
    const directory = scratchDirectory("agent-ledger-export-gap-", onTestFinished);
    const path = join(directory, "ledger.db");
    const warning = await recordGapSession(path);
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const output = join(directory, `gap.${format}`);
      const result = await runBin([
        "--store",
        `sqlite:${path}`,
        "export",
        "gap",
        "--format",
        format,
        "-o",
        output,
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr, format).toBe(`agent-ledger: warning: ${warning}\n`);
      expect(readFileSync(output, "utf8").length).toBeGreaterThan(0);
    }
    const jsonl = await runBin(["--store", `sqlite:${path}`, "export", "gap"]);
    expect(jsonl.stdout.trim().split("\n")).toHaveLength(3);
  });
});
