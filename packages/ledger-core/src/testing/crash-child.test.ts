import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { compiledBeside, killAtMarker, readReports } from "./crash-child.js";
import { scratchDirectory } from "./scratch-directory.js";

const dir = scratchDirectory("agent-ledger-crash-child-", { beforeAll, afterAll });

const core = new URL("../../dist/index.js", import.meta.url).href;
const testing = new URL("../../dist/testing/index.js", import.meta.url).href;
const sqlite = new URL("../../dist/stores/sqlite/index.js", import.meta.url).href;

// Records a model call, then three tool calls one after the other; the store halts once the
// second tool call's request has committed. The third must never reach the file.
const agent = `
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { haltAfterAppend } = await import(${JSON.stringify(testing)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const sqlite = new SqliteEventStore({ path: process.argv[1] });
await sqlite.init();
const store = haltAfterAppend(sqlite, (event) => event.type === "tool.requested" && event.payload.toolCallId === "c2", "HALTED");
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "a" } });
await recorder.startRun();
for (const id of ["c1", "c2", "c3"]) {
  await recorder.beforeToolCall({ toolCallId: id, name: "t", args: {} });
  process.stdout.write("past " + id + "\\n");
}
`;

describe("crash children", () => {
  it("haltAfterAppend: the matching append commits, its writer never hears back, nothing after it is written", async () => {
    const path = join(dir, "halt.db");
    const { stdout } = await killAtMarker(["--input-type=module", "-e", agent, path], "HALTED");
    expect(stdout).toBe("past c1\nHALTED\n");
    const store = new SqliteEventStore({ path });
    await store.init();
    try {
      const { events } = await store.readRun({ sessionId: "s", runId: "r" });
      expect(
        events.map((event) => [event.type, (event.payload as { toolCallId?: string }).toolCallId]),
      ).toEqual([
        ["run.started", undefined],
        ["tool.requested", "c1"],
        ["tool.requested", "c2"],
      ]);
    } finally {
      await store.close();
    }
  });

  it("haltHere keeps the child alive at its crash point until it is killed", async () => {
    // With only a promise that never settles, Node ends the child by itself (code 13): a
    // crash test would then race the child's own exit instead of killing it.
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { haltHere } = await import(${JSON.stringify(testing)}); await haltHere("HALTED");`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = once(child, "exit");
    await once(child.stdout, "data");
    await sleep(600);
    expect(child.exitCode).toBeNull();
    child.kill("SIGKILL");
    expect(await exited).toEqual([null, "SIGKILL"]);
  });

  it("compiledBeside finds a child's built copy under the package's last src folder", () => {
    expect(compiledBeside("./child.js", "file:///work/src/app/src/testing/crash.test.ts")).toBe(
      "/work/src/app/dist/testing/child.js",
    );
  });

  it("once a child halts, its HaltingStore commits nothing more, however late the kill comes", async () => {
    const path = join(dir, "late-kill.db");
    // A call made 50 ms after the crash point (a parallel tool call finishing) must not land.
    const script = `
const { writeSync } = await import("node:fs");
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { HaltingStore, haltHere } = await import(${JSON.stringify(testing)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const sqlite = new SqliteEventStore({ path: process.argv[1] });
await sqlite.init();
const store = new HaltingStore(sqlite, "HALTED").store;
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "a" } });
await recorder.startRun();
await recorder.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
setTimeout(() => {
  recorder.beforeToolCall({ toolCallId: "c2", name: "t", args: {} }).then(() => writeSync(1, "c2 acknowledged\\n"));
}, 50);
await haltHere("HALTED");
`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, path], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = once(child, "exit");
    while (!stdout.includes("HALTED\n")) await once(child.stdout, "data");
    await sleep(400);
    child.kill("SIGKILL");
    await exited;
    expect(stdout).toBe("HALTED\n");
    const store = new SqliteEventStore({ path });
    await store.init();
    try {
      const { events } = await store.readRun({ sessionId: "s", runId: "r" });
      expect(events.map((event) => event.type)).toEqual(["run.started", "tool.requested"]);
    } finally {
      await store.close();
    }
  });

  it("reportToParent: every report written before the kill reaches the test, in order", async () => {
    // A burst of reports and then the crash point at once: none is lost to the SIGKILL.
    const child = `
const { haltHere, reportToParent } = await import(${JSON.stringify(testing)});
for (let index = 0; index < 500; index++) reportToParent({ effect: "line " + index, index });
process.stdout.write("not a report\\n");
await haltHere("DEAD");
`;
    const { stdout } = await killAtMarker(["--input-type=module", "-e", child], "DEAD");
    const reports = readReports<{ effect: string; index: number }>(stdout);
    expect(reports.map((report) => report.index)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(reports[7]).toEqual({ effect: "line 7", index: 7 });
  });

  it("killAtMarker fails when the child ends without printing the marker", async () => {
    await expect(
      killAtMarker(
        ["--input-type=module", "-e", "console.log('HALTED soon'); console.error('boom')"],
        "HALTED",
      ),
    ).rejects.toThrow(/exited with 0 before printing HALTED[\s\S]*boom/);
  });
});
