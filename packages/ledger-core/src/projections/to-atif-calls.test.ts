import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { startedRecorder } from "./session-fixture.test.data.js";
import { toAtif } from "./to-atif.js";

describe("toAtif retries", () => {
  it("folds a retried tool call into one call with every attempt id", async () => {
    const { messageHistory } = await import("./message-history.js");
    const { store, recorder } = await startedRecorder("r");
    const model = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(model, {
      toolCalls: [{ id: "t1", name: "write_note", args: { text: "x" } }],
    });
    const first = await recorder.beforeToolCall({
      toolCallId: "t1",
      name: "write_note",
      args: { text: "x" },
    });
    const second = await recorder.retry(first);
    await recorder.toolCompleted(second, "noted");
    const trajectory = await toAtif(store, "r");
    expect(trajectory.steps).toHaveLength(1);
    const step = trajectory.steps[0];
    expect(step?.tool_calls).toHaveLength(1);
    expect(step?.tool_calls?.[0]?.extra).toMatchObject({
      attempt_id: second.attemptId,
      status: "completed",
      attempt_ids: [first.attemptId, second.attemptId],
    });
    expect(step?.observation?.results).toEqual([{ source_call_id: "t1", content: "noted" }]);
    const history = await messageHistory(store, { sessionId: "r" });
    expect(history[history.length - 1]).toEqual({
      role: "tool",
      content: "noted",
      toolCallId: "t1",
      name: "write_note",
    });
  });
});

describe("toAtif after a resume", () => {
  it("keeps a step's tool calls in the order they were asked when the first one was retried", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "order", runId: "r", actor });
    await first.startRun();
    const model = await first.beforeModelCall({ request: { model: "m", messages: [] } });
    await first.modelCompleted(model, {
      toolCalls: [
        { id: "t1", name: "read", args: {} },
        { id: "t2", name: "write", args: {} },
      ],
    });
    await first.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    const write = await first.beforeToolCall({ toolCallId: "t2", name: "write", args: {} });
    await first.toolCompleted(write, "written");
    // The process dies with `read` in flight; a new one resumes and retries it.
    const second = await SessionRecorder.resume({ store, sessionId: "order", runId: "r", actor });
    await second.beforeModelCall({ request: { model: "m", messages: [] } });
    const read = await second.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    await second.toolCompleted(read, "value");
    const [step] = (await toAtif(store, "order")).steps;
    expect(step?.tool_calls?.map((call) => call.tool_call_id)).toEqual(["t1", "t2"]);
    expect(step?.observation?.results.map((result) => result.source_call_id)).toEqual(["t1", "t2"]);
  });
});

describe("toAtif tool call arguments", () => {
  it("are always a JSON object, as ATIF requires, even when the tool took a plain value", async () => {
    const { store, recorder } = await startedRecorder("args");
    const model = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(model, {
      toolCalls: [
        { id: "c1", name: "shell", args: "ls -la" },
        { id: "c2", name: "shell", arguments: "not json" },
      ],
    });
    const shell = await recorder.beforeToolCall({
      toolCallId: "c1",
      name: "shell",
      args: "ls -la",
    });
    await recorder.toolCompleted(shell, "README.md");
    const [step] = (await toAtif(store, "args")).steps;
    expect(step?.tool_calls?.map((call) => call.arguments)).toEqual([
      { input: "ls -la" },
      { input: "not json" },
    ]);
  });
});

describe("toAtif calls that ran as a child run", () => {
  it("pairs the one call a completion asked for that no tool ran with the child run it started (a handoff)", async () => {
    const store = new MemoryEventStore();
    const shop = new SessionRecorder({
      store,
      sessionId: "handoff",
      runId: "shop",
      actor: { type: "agent", id: "shop" },
    });
    await shop.startRun();
    const asked = await shop.beforeModelCall({ request: { model: "m", messages: [] } });
    const completion = await shop.modelCompleted(asked, {
      text: "",
      toolCalls: [{ id: "call_handoff", name: "transfer_to_receipt", arguments: {} }],
    });
    const receipt = shop.child({
      runId: "receipt",
      actor: { type: "agent", id: "receipt" },
      causedByEventId: completion.eventId,
    });
    await receipt.startRun({ handoffFrom: "shop" });
    const answer = await receipt.beforeModelCall({ request: { model: "m", messages: [] } });
    await receipt.modelCompleted(answer, { text: "Receipt sent." });
    await receipt.completeRun("Receipt sent.");
    await shop.completeRun("Receipt sent.");
    const trajectory = await toAtif(store, "handoff");
    const step = trajectory.steps.find((one) => one.tool_calls !== undefined);
    expect(step?.tool_calls).toEqual([
      {
        tool_call_id: "call_handoff",
        function_name: "transfer_to_receipt",
        arguments: {},
        extra: { status: "child-run", child_run_id: "receipt" },
      },
    ]);
    expect(step?.observation?.results).toEqual([
      {
        source_call_id: "call_handoff",
        content: null,
        subagent_trajectory_ref: [{ trajectory_id: "receipt", session_id: "handoff" }],
      },
    ]);
  });
});

describe("toAtif forks", () => {
  it("marks a fork's copies of calls as copied context, their tokens counted once, in the run that made them", async () => {
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const main = new SessionRecorder({ store, sessionId: "forked", runId: "main", actor });
    await main.startRun();
    const asked = await main.beforeModelCall({ request: { model: "m", messages: [] } });
    await main.modelCompleted(asked, { text: "hi", usage: { inputTokens: 10, outputTokens: 2 } });
    await main.completeRun("hi");
    await store.fork({ sessionId: "forked", runId: "main", newRunId: "branch", uptoSeq: 3 });
    const branch = await SessionRecorder.resume({
      store,
      sessionId: "forked",
      runId: "branch",
      actor,
    });
    await branch.beforeModelCall({ request: { model: "m", messages: [] } });
    const again = await branch.beforeModelCall({ request: { model: "m2", messages: [] } });
    await branch.modelCompleted(again, {
      text: "there",
      usage: { inputTokens: 20, outputTokens: 3 },
    });
    await branch.completeRun("there");
    const trajectory = await toAtif(store, "forked");
    const forked = trajectory.subagent_trajectories?.find((one) => one.trajectory_id === "branch");
    const agentSteps = (forked?.steps ?? []).filter((step) => step.source === "agent");
    expect(agentSteps.map((step) => [step.message, step.is_copied_context ?? false])).toEqual([
      ["hi", true],
      ["there", false],
    ]);
    expect(forked?.final_metrics).toMatchObject({
      total_prompt_tokens: 20,
      total_completion_tokens: 3,
    });
    expect(trajectory.final_metrics).toMatchObject({ total_prompt_tokens: 10 });
  });
});
