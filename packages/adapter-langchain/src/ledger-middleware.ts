import {
  type Attempt,
  InvalidArgumentError,
  type JsonValue,
  LedgerError,
  type ReplayedOutcome,
  rebuiltError,
  type SerializedError,
  type SessionRecorder,
  type ToolEffect,
} from "@agent-ledger/core";
import { ToolMessage } from "@langchain/core/messages";
import { Command, getConfig, isCommand } from "@langchain/langgraph";
import { createMiddleware, type ToolCallRequest, ToolInvocationError } from "langchain";
import { abandonedCallText } from "./abandoned-message.js";
import type { LedgerCallbackHandler } from "./callback-handler.js";
import { awaitedCall } from "./interrupt-pauses.js";
import { langchainMetadata, threadIdOf } from "./langchain-metadata.js";
import { type NestedRefusal, settleRefused } from "./nested-refusal.js";
import { checkMiddlewareOptions } from "./option-checks.js";
import { abandonCallsInside } from "./outer-decision.js";
import { isRecord, toJsonValue } from "./plain-json.js";
import { messageFromJson } from "./stored-messages.js";
import { structuredOutputNote } from "./structured-output-note.js";
import { checkpointNsToRecord } from "./subgraph-runs.js";
import type { ToolAttempt } from "./tool-attempt.js";
import { ledgerToolCallId, runWithUnnamedClaim } from "./tool-claim.js";
import { toolEffect } from "./tool-effect.js";
import { askAboutUnresolved, recordAnswer } from "./unresolved-interrupt.js";

/** `ledgerMiddleware`'s options. */
export interface LedgerMiddlewareOptions {
  /** The LedgerCallbackHandler the agent is invoked with (`callbacks: [handler]`). */
  handler: LedgerCallbackHandler;
  /**
   * What a tool call in flight at a crash that may not run again (not idempotent, no decision
   * recorded) does on resume: `"throw"` (default), the agent stops with `unresolved-attempt`;
   * `"interrupt"`, the graph pauses at LangGraph's `interrupt()` with a question for a person
   * (README: "Asking a person through LangGraph"), and goes on with the answer.
   */
  onUnresolved?: "throw" | "interrupt" | undefined;
}

/**
 * A `createAgent` middleware that records tool calls itself (in `wrapToolCall`, around the
 * tool node), so that a tool that cannot be recorded does not run and an unresolved tool call
 * found on resume stops the agent with `unresolved-attempt` (or, with `onUnresolved:
 * "interrupt"`, pauses the graph to ask a person): errors thrown in callbacks are
 * turned into ToolMessages by the tool node, errors thrown here propagate. Model calls stay
 * recorded by the handler (an error in handleChatModelStart does stop the model node). On
 * resume, a tool call the ledger already holds is answered from it without running the tool.
 */
export function ledgerMiddleware(options: LedgerMiddlewareOptions) {
  checkMiddlewareOptions(options);
  const { handler } = options;
  const ask = options.onUnresolved === "interrupt";
  return createMiddleware({
    name: "AgentLedgerMiddleware",
    wrapModelCall: async (request, next) => {
      assertHandlerListens(handler, request.model);
      // A structured output asked as a tool call (toolStrategy): the agent answers that call
      // itself, no tool node runs it. The handler notes its name on the model call it records
      // (for a bare schema, the name createAgent gives it: its title, else extract-<n>).
      const note = structuredOutputNote(request.responseFormat, request.tools);
      if (note === undefined) return next(request);
      const release = handler.structuredOutputTools(currentRunId(), note);
      try {
        return await next(request);
      } finally {
        release();
      }
    },
    wrapToolCall: async (request, next) => {
      const configurable = request.runtime?.configurable;
      // LangChain's run this runs in: a sub-agent's tool call runs inside a tool call, which
      // a person's decision covers (see handler.requestToolCall).
      const runId = currentRunId();
      // The run it is recorded in: its LangGraph subgraph's child run, if any (handler README).
      const { recorder, scope } = await handler.toolRecorder(configurable, runId);
      const call = request.toolCall;
      const refused = (ended: SessionRecorder, attempt: Attempt, refusal: NestedRefusal) => {
        // Not settled here unless abandoned (answerRefused throws): the refusal goes on out of
        // this call. A tool call this runs inside (this agent a sub-agent of another's tool)
        // hears of it, as of a refusal met directly inside it.
        if (refusal.status !== "abandoned") handler.refusalGoesOut(runId, refusal);
        return answerRefused({ recorder: ended, attempt, refusal, call });
      };
      const effect = toolEffect(
        (request.tool as { metadata?: Record<string, unknown> } | undefined)?.metadata,
      );
      const toolCallId = ledgerToolCallId(call.id);
      // The thread: one handler may serve several, whose models may give the same ids.
      const threadId = threadIdOf(configurable);
      const checkpointNs = checkpointNsToRecord(configurable);
      const metadata = langchainMetadata({ recordedBy: "middleware", threadId, checkpointNs });
      const asked = { name: call.name, args: toJsonValue(call.args) };
      // The same request again after it threw (toolRetryMiddleware around this one): a retry
      // of that attempt, in its step, and on resume answered as the retry it was.
      const retried = handler.retriedToolCall(call, asked);
      const threw = (failed: Attempt) => handler.toolCallThrew(call, asked, failed);
      let requested: ToolAttempt;
      try {
        requested = retried
          ? { attempt: await recorder.retry(retried, { metadata }), approved: false }
          : await handler.requestToolCall(
              { ...asked, effect, toolCallId, threadId, metadata },
              runId,
              recorder,
            );
      } catch (error) {
        if (!ask || !LedgerError.isInstance(error, "unresolved-attempt")) {
          // Refused inside another tool call (a sub-agent's): that call did not fail.
          handler.refusedInside(runId, error, call.name);
          throw error;
        }
        // In flight at a crash, no decision recorded: a person is asked (the graph pauses
        // here), and the answer is recorded before anything runs. A node run again after that
        // finds the decision in the ledger and asks nothing.
        const answer = askAboutUnresolved(error, threadId, (question) =>
          handler.askingAbout(question, error.attempt),
        );
        // Then on as after a decision made elsewhere: abandoned, it is answered below.
        const decided = await recordAnswer(recorder, error.attempt, answer, metadata);
        requested = { attempt: decided, approved: decided.replayed === undefined };
      }
      let { attempt, approved } = requested;
      // Thrown live, the failure stopped the agent (nothing saved the tools node's writes), and
      // LangGraph runs the node again on `invoke(null)`: a tool that may run again does, as a
      // retry of the failed attempt (one the ledger holds is answered from it). Replayed, the
      // recorded error stopped every invocation again, and read as a new one.
      while (attempt.replayed && runsAgainAfter(attempt.replayed, effect)) {
        attempt = await recorder.retry(attempt, { metadata });
        approved = false;
      }
      if (attempt.replayed) {
        // Abandoned by a person, it does not run again, nor does anything made inside it.
        if (attempt.replayed.status === "abandoned")
          await abandonCallsInside(recorder, attempt, attempt.replayed.reason);
        let answer: ToolMessage | Command;
        try {
          answer = replayedToolMessage(attempt.replayed, call);
        } catch (error) {
          threw(attempt);
          if (LedgerError.isInstance(error)) throw error;
          // The recorded error, thrown where the tool's was: see throwingTool.
          return next({ ...request, tool: throwingTool(call.name, error) });
        }
        return answer;
      }
      const claimed = {
        requestedEventId: attempt.requestedEventId,
        stepId: attempt.stepId,
        approved,
        awaited: awaitedCall(attempt),
        scope,
      };
      const release =
        toolCallId !== undefined ? handler.claimToolCall(toolCallId, claimed, threadId) : () => {};
      let result: Awaited<ReturnType<typeof next>>;
      // The outcome is recorded by the recorder that writes the attempt's run as the tool ends,
      // not by `recorder`: the tool may run on after its invocation failed (a sub-agent's, beside
      // a failed tool) while the thread's next turn reopens the handler's recorder, and a write
      // on the recorder held since would meet `conflict` (or be refused, reopened).
      try {
        result = await (toolCallId !== undefined
          ? next(request)
          : runWithUnnamedClaim(claimed, async () => next(request)));
      } catch (error) {
        // The ledger refused a call the tool makes (one in flight at a crash, or one already
        // done that it cannot answer): the tool did not fail, it was not let go on.
        const refusal = handler.takeNestedRefusal(attempt.requestedEventId);
        if (refusal) return refused(await handler.recorderOf(attempt), attempt, refusal);
        // An aborted run stops waiting for the tool, which may go on and have its effect: that
        // is no failure of the tool. The attempt stays unresolved (a resume asks before
        // repeating it); only the tool's own error is recorded as tool.failed.
        if (request.runtime?.signal?.aborted !== true) {
          await (await handler.recorderOf(attempt)).toolFailed(attempt, recordedError(error));
          threw(attempt);
        }
        throw error;
      } finally {
        release();
      }
      const ended = await handler.recorderOf(attempt);
      // The tool caught the refusal and returned: what it returned was made without that call.
      const refusal = handler.takeNestedRefusal(attempt.requestedEventId);
      if (refusal) return refused(ended, attempt, refusal);
      // Outside the catch: a completion the store refuses is not a tool failure. The attempt
      // stays unresolved (the tool ran, the ledger cannot say so) and the error propagates.
      if (ToolMessage.isInstance(result) && result.status === "error") {
        await ended.toolFailed(attempt, {
          name: RETURNED_ERROR,
          message: String(result.content),
        });
      } else {
        await ended.toolCompleted(attempt, toolResultJson(result));
      }
      return result;
    },
  });
}

/** LangChain's run the code runs in (a tools node's, in `wrapToolCall`), if a graph runs it. */
function currentRunId(): string | undefined {
  let callbacks: unknown;
  try {
    callbacks = getConfig()?.callbacks;
  } catch {
    return undefined;
  }
  const manager = callbacks as { getParentRunId?: () => string | undefined } | undefined;
  return typeof manager?.getParentRunId === "function" ? manager.getParentRunId() : undefined;
}

/**
 * Refuses a model call the handler would not hear of: it records model calls, this middleware
 * only tool calls, and an agent invoked without `callbacks: [handler]` would call its models
 * unrecorded without a word (and its tool calls would have no model call to be caused by).
 * The handler may be given to the invocation (inherited by the agent's nodes, and by an agent
 * inside a tool) or to the model itself; outside a graph nothing is known, so nothing is refused.
 */
function assertHandlerListens(handler: LedgerCallbackHandler, model: unknown): void {
  let config: ReturnType<typeof getConfig> | undefined;
  try {
    config = getConfig();
  } catch {
    return;
  }
  const configured = (model as { config?: { callbacks?: unknown } } | undefined)?.config;
  const places = [
    config?.callbacks,
    (model as { callbacks?: unknown })?.callbacks,
    configured?.callbacks,
  ];
  if (config === undefined || places.some((callbacks) => holds(callbacks, handler))) return;
  throw new InvalidArgumentError(
    "$.callbacks",
    "ledgerMiddleware's handler is not among the callbacks the agent was invoked with, so its model calls would go unrecorded: invoke the agent with { callbacks: [handler] }",
  );
}

/** True when `callbacks` (a list of handlers, or a CallbackManager) holds `handler`. */
function holds(callbacks: unknown, handler: LedgerCallbackHandler): boolean {
  if (Array.isArray(callbacks)) return callbacks.includes(handler);
  const manager = callbacks as { handlers?: unknown } | undefined;
  return Array.isArray(manager?.handlers) && manager.handlers.includes(handler);
}

/**
 * A tool call inside which the ledger refused a call. Abandoned by a person, that call ends
 * this one as an abandoned call ends (the model gets a ToolMessage with the reason, now and on
 * every resume); otherwise this call stays unresolved and the refusal stops the agent.
 */
async function answerRefused(options: {
  recorder: SessionRecorder;
  attempt: Attempt;
  refusal: NestedRefusal;
  call: ToolCallLike;
}): Promise<ToolMessage | Command> {
  const { recorder, attempt, refusal, call } = options;
  const settled = await settleRefused({ recorder, attempt, refusal, askedByModel: true });
  return replayedToolMessage({ status: "abandoned", reason: settled.abandoned, eventId: "" }, call);
}

/** The name under which a tool's returned error ToolMessage is recorded as `tool.failed`. */
const RETURNED_ERROR = "ToolError";
/** LangChain's ToolInvocationError (arguments the tool's schema rejects) keeps `name` "Error". */
const INVOCATION_ERROR = "ToolInvocationError";

/** A thrown error as recorded; ToolInvocationError under its own name, so a replay can rebuild it. */
function recordedError(error: unknown): unknown {
  if (!ToolInvocationError.isInstance(error)) return error;
  return {
    name: INVOCATION_ERROR,
    message: error.message,
    stack: error.stack,
    cause: error.toolError,
  };
}

/**
 * The error a tool call threw live, rebuilt from the ledger (core's `rebuiltError`: its name,
 * message, code, status and causes). Thrown again on replay, so that what handled it live
 * handles it again: the tool node hands a ToolInvocationError to the model, toolErrorMiddleware
 * makes its ToolMessage (a `handleToolErrors` function reading `error.status` reads it again),
 * any other error stops the agent, and the caller catches what it caught live.
 */
function replayedError(recorded: Record<string, unknown>, call: ToolCallLike): Error {
  if (recorded.name === INVOCATION_ERROR) {
    const message = String(recorded.message ?? "the tool failed");
    const cause = isRecord(recorded.cause)
      ? rebuiltError(recorded.cause as SerializedError)
      : new Error(message);
    const rebuilt = new ToolInvocationError(cause, { ...call, args: call.args ?? {} });
    rebuilt.message = message;
    return rebuilt;
  }
  return rebuiltError(recorded as SerializedError);
}

/**
 * A stand-in for a tool that threw `error` live, which throws it again: on replay the next
 * handler runs it in the tool's place (createAgent lets a middleware give the tool a call runs),
 * so the error leaves the tool node as the tool's did live. Thrown by this middleware itself,
 * createAgent would hand it on as the middleware's own failure (a `MiddlewareError` with the
 * same name and message, the error on its `cause`), and a caller reading `error.status` or
 * `error.code` would not find them where it found them live.
 */
function throwingTool(name: string, error: unknown): ToolCallRequest["tool"] {
  const tool = {
    name,
    invoke: async () => {
      throw error;
    },
  };
  return tool as unknown as ToolCallRequest["tool"];
}

/**
 * True for a recorded failure that a tool declared idempotent threw (not an error ToolMessage it
 * returned, nor arguments its schema refused, which the model was given): its call runs again.
 */
function runsAgainAfter(replayed: ReplayedOutcome, effect: ToolEffect): boolean {
  if (!effect.idempotent || replayed.status !== "failed") return false;
  const name = isRecord(replayed.error) ? replayed.error.name : undefined;
  return name !== RETURNED_ERROR && name !== INVOCATION_ERROR;
}

/** A tool's result as JSON; a Command keeps the target graph its toJSON leaves out. */
function toolResultJson(result: unknown): JsonValue {
  const json = toJsonValue(result);
  const graph = isCommand(result) ? result.graph : undefined;
  return graph !== undefined && isRecord(json) ? { ...json, graph } : json;
}

/** The Command a tool returned, rebuilt from its JSON (its messages as messages). */
function commandFromJson(value: JsonValue): Command | undefined {
  if (!isRecord(value) || value.lg_name !== "Command") return undefined;
  const revive = (item: JsonValue | undefined): unknown => {
    const message = messageFromJson(item);
    if (message) return message;
    if (Array.isArray(item)) return item.map(revive);
    if (isRecord(item))
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, revive(inner)]));
    return item;
  };
  type Fields = ConstructorParameters<typeof Command>[0];
  const fields: Fields = { update: revive(value.update) as Fields["update"] };
  if (value.goto !== undefined && value.goto !== null) fields.goto = value.goto as Fields["goto"];
  if (typeof value.graph === "string") fields.graph = value.graph;
  if (value.resume !== undefined) fields.resume = value.resume;
  return new Command(fields);
}

type ToolCallLike = { id?: string | undefined; name: string; args?: Record<string, unknown> };

/** The answer of a recorded tool call: its result, or the failure it ended with, as live. */
function replayedToolMessage(replayed: ReplayedOutcome, call: ToolCallLike): ToolMessage | Command {
  const toolCallId = call.id ?? "";
  if (replayed.status === "completed") {
    const command = commandFromJson(replayed.result);
    if (command) return command;
    const message = messageFromJson(replayed.result);
    if (message && ToolMessage.isInstance(message)) return message;
    const content =
      typeof replayed.result === "string" ? replayed.result : JSON.stringify(replayed.result);
    return new ToolMessage({ content, tool_call_id: toolCallId, name: call.name });
  }
  if (replayed.status === "failed") {
    const error: Record<string, unknown> = isRecord(replayed.error) ? replayed.error : {};
    // The tool returned this error message live: the same message. Else it threw: throw again.
    if (error.name !== RETURNED_ERROR) throw replayedError(error, call);
    return new ToolMessage({
      content: String(error.message ?? ""),
      tool_call_id: toolCallId,
      name: call.name,
      status: "error",
    });
  }
  return new ToolMessage({
    content: abandonedCallText(replayed.reason),
    tool_call_id: toolCallId,
    name: call.name,
    status: "error",
  });
}
