import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { hostedCallAnswersOf, withProgramOutput } from "./hosted-call-answers.js";
import { hostedToolCallsOf } from "./hosted-tool-calls.js";
import { buildSessionModel, payloadOf } from "./session-model.js";

// A run whose model calls are given as `calls`: each its request's input and its response.
async function runOf(calls: { input: JsonValue[]; output: JsonValue[] }[]) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "main" },
  });
  await recorder.startRun();
  for (const { input, output } of calls) {
    const call = await recorder.beforeModelCall({ request: { input } });
    await recorder.modelCompleted(call, { output });
  }
  const model = buildSessionModel("s", await readWholeSession(store, "s"));
  const run = model.runs.get("r");
  if (!run) throw new Error("expected run r");
  return run;
}

const REQUEST = {
  type: "hosted_tool_call",
  id: "mcpr_1",
  name: "mcp_approval_request",
  providerData: {
    type: "mcp_approval_request",
    id: "mcpr_1",
    server_label: "repo",
    name: "delete_branch",
    arguments: "{}",
  },
};

describe("hostedCallAnswersOf", () => {
  it("reads a decision in the SDK's shape and in the Responses API's, with a rejection's reason", async () => {
    const run = await runOf([
      { input: [], output: [REQUEST, { ...REQUEST, id: "mcpr_2" }] },
      {
        input: [
          {
            type: "hosted_tool_call",
            name: "mcp_approval_response",
            providerData: { approve: true, approval_request_id: "mcpr_1" },
          },
          {
            type: "mcp_approval_response",
            approve: false,
            approval_request_id: "mcpr_2",
            reason: "not that one",
          },
        ],
        output: [],
      },
    ]);
    const answers = hostedCallAnswersOf(run);
    expect([...answers.requested]).toEqual(["mcpr_1", "mcpr_2"]);
    expect(Object.fromEntries(answers.decisions)).toEqual({
      mcpr_1: { approved: true },
      mcpr_2: { approved: false, reason: "not that one" },
    });
    expect(answers.ran.size).toBe(0);
  });

  it("finds the mcp_call an approved request ran as, with the attempt it ran in", async () => {
    const run = await runOf([
      { input: [], output: [REQUEST] },
      {
        input: [],
        output: [
          {
            type: "hosted_tool_call",
            id: "mcp_2",
            name: "mcp_call",
            output: "deleted",
            providerData: {
              type: "mcp_call",
              id: "mcp_2",
              name: "delete_branch",
              arguments: "{}",
              server_label: "repo",
              approval_request_id: "mcpr_1",
            },
          },
        ],
      },
    ]);
    const ran = hostedCallAnswersOf(run).ran.get("mcpr_1");
    expect(ran?.attemptId).toBe(run.attempts[1]?.attemptId);
    expect(ran?.call).toMatchObject({ id: "mcp_2", name: "delete_branch", output: "deleted" });
  });

  it("gives a program its output's status and result from a later response, and no result when the output holds none", async () => {
    const program = { type: "program", id: "prg_1", callId: "call_program", code: "print(1)" };
    const output = { type: "program_output", id: "prgo_1", callId: "call_program" };
    const answered = async (fields: JsonObject) => {
      const run = await runOf([
        { input: [], output: [program] },
        { input: [], output: [{ ...output, ...fields }] },
      ]);
      const [call] = hostedToolCallsOf(payloadOf(run.attempts[0]?.outcome).response);
      if (!call) throw new Error("expected the program's call");
      return withProgramOutput(call, hostedCallAnswersOf(run));
    };
    expect(await answered({ status: "completed", output: "1" })).toMatchObject({
      id: "call_program",
      status: "completed",
      output: "1",
    });
    // A recorded output item without an output (cut off) says nothing the program gave: not null.
    const cutOff = await answered({ status: "incomplete" });
    expect(cutOff.status).toBe("incomplete");
    expect(cutOff).not.toHaveProperty("output");
  });
});
