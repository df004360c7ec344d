import { describe, expect, it, vi } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import {
  recordCachedUsages,
  recordFixtureSession,
  startedRecorder,
} from "./session-fixture.test.data.js";
import { toAtif } from "./to-atif.js";

describe("toAtif", () => {
  it("places each sub-agent by a lookup, not a scan of every step: linear in the run", async () => {
    // Each child run searched every step's causes (and copied the steps for the fallback):
    // 5,000 sub-agents took 3 s. Array.prototype.includes counts the causes searched.
    const store = new MemoryEventStore();
    const actor = { type: "agent", id: "root" } as const;
    const root = new SessionRecorder({ store, sessionId: "subs", runId: "root", actor });
    await root.startRun();
    const count = 300;
    for (let index = 0; index < count; index++) {
      const model = await root.beforeModelCall({ request: { model: "m", turn: index } });
      await root.modelCompleted(model, {
        toolCalls: [{ id: `c${index}`, name: "delegate", args: {} }],
      });
      const tool = await root.beforeToolCall({
        toolCallId: `c${index}`,
        name: "delegate",
        args: {},
      });
      const caused = index % 2 === 0 ? { causedByEventId: tool.requestedEventId } : {};
      const sub = root.child({
        runId: `sub${index}`,
        actor: { type: "agent", id: "sub" },
        ...caused,
      });
      await sub.startRun();
      await sub.completeRun();
      await root.toolCompleted(tool, { index });
    }
    const searches = vi.spyOn(Array.prototype, "includes");
    let trajectory: Awaited<ReturnType<typeof toAtif>>;
    try {
      trajectory = await toAtif(store, "subs");
      expect(searches.mock.calls.length).toBeLessThan(count);
    } finally {
      searches.mockRestore();
    }
    expect(trajectory.subagent_trajectories?.map((sub) => sub.trajectory_id)).toEqual(
      Array.from({ length: count }, (_, index) => `sub${index}`),
    );
    // A caused sub-agent hangs on its call's result; the others on the step before them.
    const refs = trajectory.steps.flatMap((step) =>
      (step.observation?.results ?? []).flatMap((result) =>
        (result.subagent_trajectory_ref ?? []).map((ref) => ({ ref: ref.trajectory_id, step })),
      ),
    );
    expect(refs).toHaveLength(count);
    const calls = (sub: string) =>
      refs.find((entry) => entry.ref === sub)?.step.tool_calls?.map((call) => call.tool_call_id);
    expect(calls("sub0")).toEqual(["c0"]);
    expect(calls("sub1")).toEqual(["c1"]);
    expect(calls(`sub${count - 1}`)).toEqual([`c${count - 1}`]);
  });

  it("projects a session into an ATIF v1.7 trajectory with every field filled", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const trajectory = await toAtif(store, fixture.sessionId);

    expect(trajectory.schema_version).toBe("ATIF-v1.7");
    expect(trajectory.session_id).toBe(fixture.sessionId);
    expect(trajectory.trajectory_id).toBe(fixture.rootRunId);
    expect(trajectory.agent).toMatchObject({
      name: "planner",
      version: "1.2.0",
      model_name: "gpt-4o-mini",
      tool_definitions: [{ type: "function", name: "weather" }],
    });
    const steps = trajectory.steps;
    expect(steps.map((step) => step.step_id)).toEqual(steps.map((_, index) => index + 1));
    expect(steps.map((step) => step.source)).toEqual([
      "system",
      "user",
      "agent", // failed attempt, then its retry: asks for weather + delegate
      "agent", // final answer asking for send_email
    ]);
    for (const step of steps) expect(Date.parse(step.timestamp)).not.toBeNaN();
    // The instructions first, as the model reads them, though the input was recorded before
    // the first call, and no step's time goes back.
    expect(steps[0]?.message).toBe("You are helpful.");
    expect(steps[1]?.message).toBe("What is the weather in Paris?");
    expect(steps[0]?.timestamp).toBe(steps[1]?.timestamp);
    // The failed attempt is no reply of its own: its retry's step says it.
    const asking = steps[2];
    expect(asking?.extra).toMatchObject({
      status: "completed",
      retry_of: fixture.failedModelAttemptId,
      retried_attempts: [
        {
          attempt_id: fixture.failedModelAttemptId,
          status: "failed",
          error: "Error: rate limited",
        },
      ],
    });
    expect(asking?.model_name).toBe("gpt-4o-mini");
    expect(asking?.message).toBe("Let me check.");
    expect(asking?.metrics).toEqual({
      prompt_tokens: 50,
      completion_tokens: 12,
      cached_tokens: 10,
    });
    expect(
      asking?.tool_calls?.map((call) => [call.tool_call_id, call.function_name, call.arguments]),
    ).toEqual([
      ["call-1", "weather", { city: "Paris" }],
      ["call-2", "delegate", { topic: "umbrellas" }],
    ]);
    const results = asking?.observation?.results ?? [];
    expect(results[0]).toMatchObject({ source_call_id: "call-1", content: '{"tempC":18}' });
    expect(results[1]).toMatchObject({
      source_call_id: "call-2",
      content: "Bring an umbrella.",
      subagent_trajectory_ref: [
        { trajectory_id: fixture.childRunId, session_id: fixture.sessionId },
      ],
    });

    const last = steps[3];
    expect(last?.metrics).toEqual({ prompt_tokens: 80, completion_tokens: 9 });
    expect(last?.tool_calls?.[0]).toMatchObject({
      tool_call_id: "call-3",
      function_name: "send_email",
    });
    expect(last?.observation?.results[0]).toMatchObject({
      source_call_id: "call-3",
      content: null,
      extra: { status: "unresolved" },
    });

    expect(trajectory.final_metrics).toEqual({
      total_prompt_tokens: 130,
      total_completion_tokens: 21,
      total_cached_tokens: 10,
      total_steps: 4,
    });
    expect(trajectory.extra).toMatchObject({
      status: "running",
      unresolved_attempts: [fixture.unresolvedAttemptId],
    });

    const child = trajectory.subagent_trajectories?.[0];
    expect(child?.trajectory_id).toBe(fixture.childRunId);
    expect(child?.agent).toMatchObject({ name: "researcher", model_name: "claude-haiku" });
    expect(child?.steps.map((step) => step.source)).toEqual(["user", "agent"]);
    expect(child?.steps[1]).toMatchObject({
      model_name: "claude-haiku",
      metrics: { prompt_tokens: 30, completion_tokens: 5 },
      tool_calls: [
        { tool_call_id: "call-s", function_name: "search", arguments: { q: "umbrella" } },
      ],
    });
    expect(child?.steps[1]?.observation?.results[0]?.content).toBe(
      "TimeoutError: search timed out",
    );
    expect(child?.extra).toMatchObject({ status: "completed", parent_run_id: fixture.rootRunId });
    // The whole document is plain JSON.
    expect(JSON.parse(JSON.stringify(trajectory))).toEqual(trajectory);
  });

  it("fails with not-found for a session without events", async () => {
    await expect(toAtif(new MemoryEventStore(), "nobody")).rejects.toMatchObject({
      code: "not-found",
    });
  });
});

describe("toAtif token metrics", () => {
  it("counts Anthropic's prompt-cache reads and writes in prompt_tokens, the reads as cached", async () => {
    const store = new MemoryEventStore();
    await recordCachedUsages(store, "cache");
    const trajectory = await toAtif(store, "cache");
    const expected = { prompt_tokens: 4112, completion_tokens: 7, cached_tokens: 4000 };
    expect(trajectory.steps.map((step) => step.metrics)).toEqual([expected, expected, expected]);
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: 3 * 4112,
      total_cached_tokens: 3 * 4000,
    });
  });
});

describe("toAtif of a run with no calls", () => {
  it("still has a step, as ATIF requires, when the run crashed right after it started", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "crash",
      actor: { type: "agent", id: "a" },
    });
    const started = await recorder.startRun();
    const trajectory = await toAtif(store, "crash");
    expect(trajectory.steps).toEqual([
      {
        step_id: 1,
        timestamp: started.recordedAt,
        source: "system",
        message: "Run started; no input, agent turn or tool call recorded.",
        extra: { run_id: started.runId, event_id: started.eventId },
      },
    ]);
    expect(trajectory.final_metrics?.total_steps).toBe(1);
  });

  it("makes the input its start carried a user step", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "crash-input",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun({ input: "Summarise the report." });
    await recorder.failRun(new Error("out of memory"));
    const trajectory = await toAtif(store, "crash-input");
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ["user", "Summarise the report."],
    ]);
  });
});

describe("toAtif of a failed run", () => {
  it("leaves the error's stacks (local file paths) out of extra.result", async () => {
    const { store, recorder } = await startedRecorder("failed");
    await recorder.failRun(new Error("boom", { cause: new Error("disk full") }));
    const trajectory = await toAtif(store, "failed");
    expect(JSON.stringify(trajectory)).not.toContain("stack");
    expect(trajectory.extra?.result).toEqual({
      error: { name: "Error", message: "boom", cause: { name: "Error", message: "disk full" } },
    });
    expect(trajectory.steps[0]?.message).toBe(
      "Run failed before any input, agent turn or tool call: Error: boom",
    );
  });
});

describe("toAtif model names", () => {
  it("takes a call's model from its metadata when its request names none (OpenAI Agents)", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "named",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({
      request: { input: [{ role: "user", content: "hi" }] },
      metadata: { model: "gpt-4.1" },
    });
    await recorder.modelCompleted(call, { output: [] });
    const trajectory = await toAtif(store, "named");
    expect(trajectory.agent.model_name).toBe("gpt-4.1");
    expect(trajectory.steps.find((step) => step.source === "agent")?.model_name).toBe("gpt-4.1");
  });
});
