import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { HandlerState } from "./handler-state.js";
import { threadIdOf } from "./langchain-metadata.js";
import { chatRequest, textRequest } from "./model-request.js";

// What LedgerCallbackHandler does on LangChain's chat model and LLM start callbacks.

/** What LangChain's `handleChatModelStart` and `handleLLMStart` give, by name. */
interface ModelStart {
  llm: Serialized;
  runId: string;
  parentRunId: string | undefined;
  extraParams: Record<string, unknown> | undefined;
  tags: string[] | undefined;
  metadata: Record<string, unknown> | undefined;
  runName: string | undefined;
}

/** A chat model call started, with its `messages`. */
export function chatModelStarted(
  state: HandlerState,
  start: ModelStart & { messages: BaseMessage[][] },
): Promise<void> {
  const { llm, messages, runId, parentRunId, extraParams, tags, metadata, runName } = start;
  return modelStarted(state, metadata, parentRunId, () =>
    state.models.started(
      chatRequest({ llm, messages, extraParams, metadata }),
      { runId, parentRunId, runName, tags },
      { llm, lsMetadata: metadata, extraParams, messages },
    ),
  );
}

/** A text LLM call started, with its `prompts`. */
export function llmStarted(
  state: HandlerState,
  start: ModelStart & { prompts: string[] },
): Promise<void> {
  const { llm, prompts, runId, parentRunId, extraParams, tags, metadata, runName } = start;
  return modelStarted(state, metadata, parentRunId, () =>
    state.models.started(
      textRequest({ llm, prompts, extraParams, metadata }),
      { runId, parentRunId, runName, tags },
      { llm, lsMetadata: metadata, extraParams },
    ),
  );
}

/**
 * A model call of the thread `metadata` names starts (`start` records it), unless the handler
 * refused a tool call of that thread in its invocation: a tool node that turned the refusal
 * into a ToolMessage would have the model read it as the tool's answer. The call is refused
 * with the same error, and nothing is recorded for it. Not a model call inside a tool call (an
 * agent tool's, run beside the refused call in the same step): that call reads no refusal, and
 * refused, it would end failed with another call's error; the thread's next model call outside
 * a tool still stops the run.
 */
async function modelStarted(
  state: HandlerState,
  metadata: Record<string, unknown> | undefined,
  parentRunId: string | undefined,
  start: () => Promise<void>,
): Promise<void> {
  if (!state.runs.enclosingTool(parentRunId))
    await state.refusedThreads.check(threadIdOf(metadata), (attempt) =>
      state.subgraphs.recorderOf(attempt),
    );
  return start();
}
