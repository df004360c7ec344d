import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCrashScenario } from "./scenario.js";

const dir = scratchDirectory("agent-ledger-plain-loop-", { beforeAll, afterAll });

describe("plain-loop demo", () => {
  it("a SIGKILL inside a tool call is inspected, resumed, and costs nothing twice", async () => {
    const result = await runCrashScenario({ dir });
    expect(result.killedBy).toBe("SIGKILL");
    // At the crash: the note tool was in flight, everything before it finished.
    expect(
      result.atCrash.unresolved.map((attempt) => [attempt.kind, attempt.name, attempt.toolCallId]),
    ).toEqual([["tool", "write_note", "call_note_1"]]);
    expect(result.atCrash.runs[0]?.status).toBe("running");
    // The resume answered the two earlier model calls and both earlier tools from the ledger.
    expect(result.resumeLog.filter((message) => message.kind === "model-replayed")).toHaveLength(2);
    expect(
      result.resumeLog
        .filter((message) => message.kind === "tool-replayed")
        .map((message) => message.name)
        .sort(),
    ).toEqual(["lookup_weather", "send_email"]);
    expect(
      result.resumeLog
        .filter((message) => message.kind === "tool-retried")
        .map((message) => message.name),
    ).toEqual(["write_note"]);
    expect(result.crashed).toEqual(result.baseline);
    expect(result.baseline).toEqual({ modelCalls: 3, emailsSent: 1, notesWritten: 1 });
    expect(result.final.unresolved).toEqual([]);
    expect(result.final.runs[0]?.status).toBe("completed");
    expect(result.chainOk).toBe(true);
  });
});
