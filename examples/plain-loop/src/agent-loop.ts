import { type EventStore, type JsonValue, SessionRecorder } from "@agent-ledger/core";
import { callFakeModel, type Message, type ModelResponse } from "./fake-model.js";
import { tools } from "./tools.js";

export interface LoopOptions {
  store: EventStore;
  sessionId: string;
  runId: string;
  workDir: string;
  resume: boolean;
  /** Told about progress; the demo uses it to kill the process inside a tool call. */
  onProgress?: (
    event:
      | { kind: "tool-started"; name: string; toolCallId: string }
      | { kind: "model-replayed" | "tool-replayed" | "tool-retried"; name?: string },
  ) => void;
}

const actor = { type: "agent", id: "trip-planner", framework: "plain-loop" } as const;
const task = "Plan the team offsite in Lisbon and tell the team.";

/**
 * A dependency-free agent loop recording to the ledger. On resume it runs the same loop from
 * the same input: the recorder answers every call the ledger already holds, so nothing is paid
 * for or sent twice, and it continues live from where the process died.
 */
export async function runAgentLoop(options: LoopOptions): Promise<string> {
  const recorder = options.resume
    ? await SessionRecorder.resume({
        store: options.store,
        sessionId: options.sessionId,
        runId: options.runId,
        actor,
      })
    : new SessionRecorder({
        store: options.store,
        sessionId: options.sessionId,
        runId: options.runId,
        actor,
      });
  await recorder.startRun({ task });
  await recorder.recordInput(task);
  const messages: Message[] = [{ role: "user", content: task }];
  for (let turn = 0; turn < 10; turn++) {
    const attempt = await recorder.beforeModelCall({
      request: { model: "fake-planner-1", messages: messages as unknown as JsonValue },
    });
    let response: ModelResponse;
    if (attempt.replayed?.status === "completed") {
      response = attempt.replayed.result as unknown as ModelResponse;
      options.onProgress?.({ kind: "model-replayed" });
    } else {
      response = await callFakeModel(messages, `${options.workDir}/model-bill.log`);
      await recorder.modelCompleted(attempt, response as unknown as JsonValue);
    }
    messages.push({ role: "assistant", content: response.content, toolCalls: response.toolCalls });
    if (response.toolCalls.length === 0) {
      await recorder.completeRun({ answer: response.content });
      return response.content;
    }
    // Parallel tool calls: their requests are committed together in one append.
    const results = await Promise.all(
      response.toolCalls.map(async (call) => {
        const tool = tools[call.name];
        if (!tool) throw new Error(`unknown tool ${call.name}`);
        const toolAttempt = await recorder.beforeToolCall({
          toolCallId: call.id,
          name: call.name,
          args: call.args,
          effect: tool.effect,
        });
        if (toolAttempt.replayed?.status === "completed") {
          options.onProgress?.({ kind: "tool-replayed", name: call.name });
          return { call, content: String(toolAttempt.replayed.result) };
        }
        if (toolAttempt.retryOf) options.onProgress?.({ kind: "tool-retried", name: call.name });
        const content = await tool.run(call.args, {
          workDir: options.workDir,
          toolCallId: call.id,
          onStarted: () =>
            options.onProgress?.({ kind: "tool-started", name: call.name, toolCallId: call.id }),
        });
        await recorder.toolCompleted(toolAttempt, content);
        return { call, content };
      }),
    );
    for (const { call, content } of results)
      messages.push({ role: "tool", toolCallId: call.id, content });
  }
  throw new Error("the agent did not finish in 10 turns");
}
