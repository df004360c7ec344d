import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";

const actor = { type: "agent", id: "a" } as const;
const request = { model: "m", messages: [{ role: "user", content: "Refund my order." }] };

/** An error as the AI SDK throws it for a provider's 503. */
function serviceUnavailable(): Error {
  const error = new Error("Service Unavailable");
  error.name = "AI_APICallError";
  return error;
}

const agentSteps = (trajectory: Awaited<ReturnType<typeof toAtif>>) =>
  trajectory.steps.filter((step) => step.source === "agent");

describe("toAtif of a model call that was retried", () => {
  it("is one agent step with the reply that completed, the failed attempts in extra", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const failed = await recorder.beforeModelCall({ request });
    await recorder.modelFailed(failed, serviceUnavailable());
    // The stream of the second attempt breaks mid-way: half a sentence had arrived.
    const cut = await recorder.retry(failed);
    await recorder.modelFailed(cut, new Error("socket hang up"), {
      partial: {
        text: "Your refund of 40 EUR was ",
        usage: { input_tokens: 20, output_tokens: 6 },
      },
    });
    const last = await recorder.retry(cut);
    await recorder.modelCompleted(last, {
      text: "Your refund of 40 EUR was sent.",
      usage: { input_tokens: 20, output_tokens: 9 },
    });
    const trajectory = await toAtif(store, "s");
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ["user", "Refund my order."],
      ["agent", "Your refund of 40 EUR was sent."],
    ]);
    const [step] = agentSteps(trajectory);
    expect(step?.llm_call_count).toBe(1);
    expect(step?.metrics).toEqual({ prompt_tokens: 20, completion_tokens: 9 });
    expect(step?.extra).toMatchObject({
      attempt_id: last.attemptId,
      status: "completed",
      attempt_ids: [failed.attemptId, cut.attemptId, last.attemptId],
      retried_attempts: [
        {
          attempt_id: failed.attemptId,
          status: "failed",
          error: "AI_APICallError: Service Unavailable",
        },
        {
          attempt_id: cut.attemptId,
          status: "failed",
          error: "Error: socket hang up",
          partial_message: "Your refund of 40 EUR was ",
          metrics: { prompt_tokens: 20, completion_tokens: 6 },
        },
      ],
    });
    // The tokens the cut-off stream used were spent: the totals still count them.
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: 40,
      total_completion_tokens: 15,
      total_steps: 2,
    });
  });

  it("is one agent step when the call was in flight at a crash and made again on resume", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await first.startRun();
    const lost = await first.beforeModelCall({ request });
    // The process dies (SIGKILL) with the call in flight; a new one resumes and calls again.
    const second = await SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor });
    const again = await second.beforeModelCall({ request });
    expect(again.retryOf).toBe(lost.attemptId);
    await second.modelCompleted(again, { text: "Done." });
    await second.completeRun("Done.");
    const trajectory = await toAtif(store, "s");
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ["user", "Refund my order."],
      ["agent", "Done."],
    ]);
    expect(agentSteps(trajectory)[0]?.extra).toMatchObject({
      attempt_id: again.attemptId,
      status: "completed",
      attempt_ids: [lost.attemptId, again.attemptId],
      retried_attempts: [{ attempt_id: lost.attemptId, status: "requested" }],
    });
    expect(trajectory.extra?.unresolved_attempts).toEqual([]);
  });
});

describe("toAtif of a model call never retried", () => {
  it("that failed is an agent step with no message, its error in extra", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const failed = await recorder.beforeModelCall({ request });
    await recorder.modelFailed(failed, serviceUnavailable(), {
      partial: { text: "Your refund of" },
    });
    await recorder.failRun(serviceUnavailable());
    const [step] = agentSteps(await toAtif(store, "s"));
    expect(step?.message).toBe("");
    expect(step?.extra).toMatchObject({
      attempt_id: failed.attemptId,
      status: "failed",
      error: "AI_APICallError: Service Unavailable",
      partial_message: "Your refund of",
    });
  });

  it("that was in flight when the recording ends is an agent step with no message", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const lost = await recorder.beforeModelCall({ request });
    const trajectory = await toAtif(store, "s");
    const [step] = agentSteps(trajectory);
    expect(step?.message).toBe("");
    // "unresolved", as tool calls in flight and `extra.unresolved_attempts` say it.
    expect(step?.extra).toMatchObject({ attempt_id: lost.attemptId, status: "unresolved" });
    expect(trajectory.extra?.unresolved_attempts).toEqual([lost.attemptId]);
  });
});
