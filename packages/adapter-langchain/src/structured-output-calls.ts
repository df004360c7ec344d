import type { JsonObject, SessionRecorder } from "@agent-ledger/core";
import { ToolMessage } from "@langchain/core/messages";
import { GENERATED_NAME } from "./generated-tool-names.js";
import { langchainMetadata } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";

/**
 * The custom event that names the tool calls of a model completion (its `causedByEventId`)
 * that createAgent answered itself as its structured response (`responseFormat` given as a
 * tool call, `toolStrategy`): no tool node runs them, so restoreMessages keeps them out of
 * `pendingToolCalls`. Payload `{ toolCalls: [{ id, name }] }`.
 */
export const STRUCTURED_RESPONSE_EVENT = "x.langchain.structured-response";

/**
 * The run names LangChain's base `withStructuredOutput` gives its pipeline (model, then the
 * parser that reads the tool call): `StructuredOutput`, or `StructuredOutputRunnable` with
 * `includeRaw` (the model then runs in a `RunnableMap` step, `{ raw: model }`).
 */
const PIPELINE_NAMES = new Set(["StructuredOutput", "StructuredOutputRunnable"]);

/**
 * A serialized runnable's fields. LangChain serializes only the top: its steps are in its
 * `kwargs` as the runnables themselves (JSON.stringify calls their `toJSON`), so read through it.
 */
function fieldsOf(value: unknown): Record<string, unknown> {
  const serialized =
    isRecord(value) && typeof value.toJSON === "function"
      ? (value.toJSON as () => unknown)()
      : value;
  return isRecord(serialized) ? serialized : {};
}
const lastId = (value: unknown): unknown => {
  const { id } = fieldsOf(value);
  return Array.isArray(id) ? id.at(-1) : undefined;
};
const kwargsOf = (value: unknown): Record<string, unknown> => {
  const { kwargs } = fieldsOf(value);
  return isRecord(kwargs) ? kwargs : {};
};

/** A model bound to one tool (`bindTools([schema])`, serialized as a RunnableBinding). */
function modelBoundToOneTool(serialized: unknown): boolean {
  if (lastId(serialized) !== "RunnableBinding") return false;
  const config = kwargsOf(serialized).config;
  return isRecord(config) && Array.isArray(config.tools) && config.tools.length === 1;
}

/**
 * True for the serialized chain of the base `withStructuredOutput` whatever its name
 * (`.withConfig({ runName })` replaces `StructuredOutput`, and LangChain passes no tag or
 * metadata for it): a sequence whose first step is the model bound to the schema's one tool and
 * whose other step parses its tool call, a RunnableLambda; with `includeRaw`, the model in a
 * `{ raw }` map, then the parser assigning `parsed`, with its fallback.
 */
function isPipelineShape(serialized: unknown): boolean {
  if (lastId(serialized) !== "RunnableSequence") return false;
  const { first, middle, last } = kwargsOf(serialized);
  if (middle !== undefined && !(Array.isArray(middle) && middle.length === 0)) return false;
  if (modelBoundToOneTool(first)) return lastId(last) === "RunnableLambda";
  const steps = kwargsOf(first).steps;
  if (lastId(first) !== "RunnableMap" || !isRecord(steps)) return false;
  if (Object.keys(steps).join() !== "raw" || !modelBoundToOneTool(steps.raw)) return false;
  const assign = kwargsOf(last).runnable;
  const parsed = kwargsOf(kwargsOf(assign).mapper).steps;
  return (
    lastId(last) === "RunnableWithFallbacks" &&
    lastId(assign) === "RunnableAssign" &&
    isRecord(parsed) &&
    Object.keys(parsed).join() === "parsed"
  );
}

/**
 * Which tools' calls a model call's `metadata.structuredOutput` names as the structured output
 * the agent answers itself (createAgent's `toolStrategy`, as the handler records it from
 * ledgerMiddleware's note): those in `tools`, and with `generated`, any createAgent named
 * `extract-<n>` (a bare schema without a title, the names sent unknown). A ledger recorded before
 * bare schemas were noted by name has `agentTools` instead: any tool but the agent's own. None
 * for any other value.
 */
export function structuredOutputTool(structured: unknown): (name: string) => boolean {
  const names = (key: string) => {
    const list = isRecord(structured) ? structured[key] : undefined;
    return new Set(Array.isArray(list) ? list.filter((name) => typeof name === "string") : []);
  };
  if (isRecord(structured) && Array.isArray(structured.agentTools)) {
    const agentTools = names("agentTools");
    return (name) => !agentTools.has(name);
  }
  const tools = names("tools");
  const generated = isRecord(structured) && structured.generated === true;
  return (name) => tools.has(name) || (generated && GENERATED_NAME.test(name));
}

/** A completion that asked for tool calls, under a chain still running. */
interface AskingCompletion {
  eventId: string;
  /** The ledger run it is recorded in (a subgraph's child run, or the handler's). */
  runId: string;
  toolCalls: { id: string; name: string }[];
  /** Its request's `metadata.structuredOutput`, which may name the structured output's tool already. */
  structuredOutput: unknown;
  threadId: string | undefined;
}

/**
 * How the handler knows a model call gives a structured output as a tool call when LangChain
 * does not say so in the call options (`ls_structured_output_format`, which the providers'
 * own `withStructuredOutput` pass):
 *
 * - the base `withStructuredOutput` (of a model that does not override it) runs the model in
 *   its `StructuredOutput` chain (renamed, a chain of its shape): a call made right under it
 *   (`inPipeline`);
 * - createAgent's model node answers a `toolStrategy` call itself: the node ends with its
 *   `structuredResponse` and a ToolMessage for the call, which `answered` notes in the ledger.
 */
export class StructuredOutputCalls {
  /** The pipelines of the base withStructuredOutput in progress (and their `{ raw }` steps). */
  readonly #pipelines = new Set<string>();
  /** The completions that asked for tool calls, by the chain they were made under. */
  readonly #asking = new Map<string, AskingCompletion[]>();

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return { structuredPipelines: this.#pipelines.size, askingCompletions: this.#asking.size };
  }

  /**
   * A chain started, named `name` (its runName, or its class), `serialized` as LangChain gives
   * it: the pipeline is known by its own names, or, renamed, by its shape and a name that is
   * not its class's (a chain of your own of that shape, unnamed, is no structured output).
   */
  chainStarted(
    runId: string,
    name: string,
    parentRunId: string | undefined,
    serialized: unknown,
  ): void {
    const rawStep = name === "RunnableMap" && parentRunId !== undefined;
    const renamed = name !== lastId(serialized) && isPipelineShape(serialized);
    if (PIPELINE_NAMES.has(name) || renamed || (rawStep && this.#pipelines.has(parentRunId)))
      this.#pipelines.add(runId);
  }

  /** True when a model call made under `parentRunId` is the base withStructuredOutput's. */
  inPipeline(parentRunId: string | undefined): boolean {
    return parentRunId !== undefined && this.#pipelines.has(parentRunId);
  }

  /** A completion made under `parentRunId` asked for `toolCalls`. */
  completed(parentRunId: string | undefined, completion: AskingCompletion): void {
    if (parentRunId === undefined || completion.toolCalls.length === 0) return;
    const list = this.#asking.get(parentRunId) ?? [];
    list.push(completion);
    this.#asking.set(parentRunId, list);
  }

  /**
   * The chain `runId` ended with `outputs`: if it is createAgent's model node answering a
   * structured output (`structuredResponse`, and a ToolMessage for a call a completion made
   * under it asked for), those calls are noted as answered by the agent, in the run of the
   * completion (`recorderOf` its ledger run): restoreMessages reads the note with the turn.
   */
  async answered(
    recorderOf: (run: { runId: string }) => Promise<SessionRecorder>,
    runId: string,
    outputs: unknown,
  ) {
    const asking = this.#asking.get(runId);
    if (!asking || !isRecord(outputs) || !("structuredResponse" in outputs)) return;
    const messages = Array.isArray(outputs.messages) ? outputs.messages : [];
    const answeredIds = new Set(
      messages
        .filter((message) => ToolMessage.isInstance(message))
        .map((message) => (message as ToolMessage).tool_call_id),
    );
    for (const completion of asking) {
      const noted = structuredOutputTool(completion.structuredOutput);
      const toolCalls = completion.toolCalls.filter(
        (call) => answeredIds.has(call.id) && !noted(call.name),
      );
      if (toolCalls.length === 0) continue;
      await (await recorderOf(completion)).record({
        type: STRUCTURED_RESPONSE_EVENT,
        causedByEventId: completion.eventId,
        payload: { toolCalls } as JsonObject,
        metadata: langchainMetadata({ runId, threadId: completion.threadId }),
      });
    }
  }

  /** The chain `runId` ended or failed: what was kept for it is forgotten. */
  ended(runId: string): void {
    this.#pipelines.delete(runId);
    this.#asking.delete(runId);
  }
}
