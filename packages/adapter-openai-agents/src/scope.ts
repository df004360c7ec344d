import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Actor,
  type Attempt,
  RECORDS_EVERY_CALL_FIELD,
  type Redaction,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { ContextChange } from "./context-changes.js";

/** What the ledger knew about a tool call (by the SDK's callId) when the run was resumed. */
export interface RecordedToolCall {
  attemptId: string;
  status: "requested" | "completed" | "failed" | "abandoned";
  /** The model.completed that asked for the call. */
  causedByEventId: string | undefined;
  /** The name the call was recorded under (its tool's, qualified by a namespace). */
  name: string | undefined;
  /** The reason recorded on `attempt.abandoned` (status "abandoned"). */
  abandonReason?: string;
}

/** A person's approval to run an unresolved tool call again, not made yet. */
export interface ApprovedRetry {
  /** The attempt a crash left in flight. */
  attemptId: string;
  /** Records the retry the tool then runs under, with the recorder it runs on. */
  retry: (recorder: SessionRecorder) => Promise<Attempt>;
}

/** State shared by every scope of one ledger run (the root run and its child runs). */
export interface LedgerRunState {
  /**
   * The caller's `redact` for the run (runWithLedger's or resumeRun's), if any: a redaction its
   * recorders apply, or `false`: model requests recorded as built, credentials and all.
   */
  redact?: Redaction | false;
  /**
   * Recorded tool calls by callId (only on a resumed run), the latest attempt of each call in
   * request order: some providers number calls per response (call_0 on every turn), so one
   * callId may name a call of each turn. See `recordedCall`.
   */
  recordedToolCalls: Map<string, RecordedToolCall[]>;
  /** Names of the tools with a call in `recordedToolCalls`. */
  recordedToolNames: Set<string>;
  /** callId -> eventId of the latest model completion (replayed or live) that asked for it. */
  callCauses: Map<string, string>;
  /** The model completions this process answered from the ledger (eventIds). */
  replayedCompletions: Set<string>;
  /**
   * The calls on the current interruptions that the ledger's replay rule approved (see
   * `approvedByReplay`), by callId: no person decided them, so no decision is recorded for them.
   * Kept in the RunState checkpoint, as the approvals themselves are kept on the RunState.
   */
  replayApprovals: Set<string>;
  /** Decisions a person made on approval interruptions: key = attemptId, else `call:<callId>`. */
  decisions: Map<string, boolean>;
  /**
   * Decisions a person made for every call of a tool (`alwaysApprove` / `alwaysReject`), by
   * tool name, with the text a rejection showed the model. Applied to each call of the tool
   * that has no decision of its own, except one a crash left in flight: that one may have run,
   * and a person is asked about it whatever they decided for the others (see
   * `applyRecordedDecisions`).
   */
  permanentDecisions: Map<string, { approved: boolean; message?: string }>;
  /** The text a person rejected a call with (same keys as `decisions`), shown to the model. */
  rejectionMessages: Map<string, string>;
  /**
   * Approved re-runs of unresolved tool calls, by callId: recorded when the tool runs (see
   * `takeApprovedRetry`), so a re-run the SDK never makes leaves nothing in flight.
   */
  approvedRetries: Map<string, ApprovedRetry>;
  /**
   * Tool calls running an agent (Agent.asTool) whose run paused at an approval, by callId: the
   * attempt stays open and the call goes on, on the same child run, when the run resumes.
   */
  pausedAgentTools: Map<string, Attempt>;
  /**
   * Tool calls in flight at the crash that the resume makes again by itself, by attemptId, as
   * core's `madeAgainByItself` decides (see `agentCallsMadeAgain`): read for agent tools with the
   * default effect, which run again by themselves only when their child runs record every call;
   * others are asked about.
   */
  safeAgentCalls: Set<string>;
  /**
   * The child run of each paused agent tool call of this process, by callId: when the run goes
   * on in the same process (a decision the ledger holds answered the pause), the nested agent
   * goes on recording there instead of in a second child run.
   */
  pausedAgentRuns: Map<string, SessionRecorder>;
  /**
   * What each recorded call changed in the run's context (`x.openai-agents.context`), by
   * attemptId: given to the context again when the ledger answers the call.
   */
  contextChanges: Map<string, ContextChange>;
}

/** What a guardrail's child run says of it in its `run.started` (see guardrails.ts). */
export interface GuardrailOf {
  guardrailOf: string;
  guardrail: "input" | "output" | "tool_input" | "tool_output";
  /** A tool guardrail's: the call it checks. */
  toolCallId?: string;
}

/**
 * Which run records the model and tool calls happening now. Hooks are not awaited in the SDK,
 * so the adapter carries this in AsyncLocalStorage: runWithLedger enters the root scope, a
 * handoff moves `current` to a child run, and a tool call enters a nested scope so an agent
 * run inside the tool (Agent.asTool) records on its own child run.
 */
export interface LedgerScope {
  root: SessionRecorder;
  current: SessionRecorder | undefined;
  currentAgent: object | undefined;
  /**
   * Set in a tool call's (or a guardrail's) nested scope: where a nested agent run's child run
   * hangs.
   */
  parent?: {
    /** The run the child run hangs on; else `of`'s, resolved when the child run opens. */
    recorder?: SessionRecorder;
    /** A guardrail's: the scope it runs in, whose run may not be open yet (an agent tool's). */
    of?: { scope: LedgerScope; agent: object | undefined };
    causedByEventId: string | undefined;
    toolName: string;
    /** Set in a guardrail's scope: its child run says `guardrailOf`, not `asToolOf`. */
    guardrail?: GuardrailOf;
    /** The nested agent run goes on from its paused RunState: what it does next is live. */
    continuing?: boolean;
  };
  /**
   * The tool calls of the latest model response in this scope: the calls the tools are about
   * to run. Undefined until a model answers in this process (a run going on from a RunState).
   */
  turnCalls?: { callId: string; name: string }[];
  /**
   * Set in a tool call's nested scope when the agent it runs started (`watchAgentStart`):
   * whether that agent records every call it makes, said on the child run when it starts.
   */
  recordsEveryCall?: boolean;
  /** A tool in this scope asked for an approval: the agent run of this scope pauses. */
  paused?: boolean;
  /** The first call the ledger refused in this scope (see `refused`). */
  refused?: unknown;
  run: LedgerRunState;
}

const storage = new AsyncLocalStorage<LedgerScope>();

export function currentScope(): LedgerScope | undefined {
  return storage.getStore();
}

/**
 * Notes on the current scope that the ledger refused a call (a store failure, an unresolved
 * call, a divergence) and returns the error to throw. Inside an agent used as a tool, the
 * SDK turns the nested run's error into a message for the model and the outer run goes on;
 * the tool's wrapper rethrows the noted error instead, so the run stops (fails closed) as it
 * does for any other refused call.
 */
export function refused(error: unknown): unknown {
  const scope = storage.getStore();
  if (scope && scope.refused === undefined) scope.refused = error;
  return error;
}

/** Runs a ledger operation; its failure is the ledger's (not the model's or the tool's): noted. */
export function ledgerStep<T>(operation: () => Promise<T>): Promise<T> {
  return operation().catch((error: unknown) => {
    throw refused(error);
  });
}

export function runInScope<T>(scope: LedgerScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function agentActor(name: string): Actor {
  return { type: "agent", id: name, framework: "openai-agents" };
}

function nameOf(agent: object | undefined): string | undefined {
  const name = (agent as { name?: unknown } | undefined)?.name;
  return typeof name === "string" && name.length > 0 ? name : undefined;
}

async function openChild(
  parent: SessionRecorder,
  agent: object | undefined,
  fallbackName: string,
  causedByEventId: string | undefined,
  payload: Record<string, unknown>,
): Promise<SessionRecorder> {
  const name = nameOf(agent) ?? fallbackName;
  const child = parent.child({
    actor: agentActor(name),
    ...(causedByEventId !== undefined ? { causedByEventId } : {}),
  });
  await child.startRun({ agent: name, ...payload });
  return child;
}

/**
 * Called (awaited) by the runner right before every model call with the agent about to be
 * called, through the runner's callModelInputFilter. A different agent than the scope's
 * current one means a handoff: its calls go to a child run of the run that handed off.
 */
export async function enterAgent(scope: LedgerScope, agent: object): Promise<void> {
  if (scope.currentAgent === agent && scope.current) return;
  if (scope.current === undefined) {
    await recorderOf(scope, agent);
    scope.currentAgent = agent;
    return;
  }
  if (scope.currentAgent === undefined) {
    scope.currentAgent = agent;
    return;
  }
  const from = nameOf(scope.currentAgent);
  scope.current = await openChild(
    scope.current,
    agent,
    "agent",
    scope.current.lastModelCompletionId,
    from !== undefined ? { handoffFrom: from } : {},
  );
  scope.currentAgent = agent;
}

/** The recorder for a call in this scope; a nested scope opens its child run on first use. */
export async function recorderOf(scope: LedgerScope, agent?: object): Promise<SessionRecorder> {
  if (scope.current) return scope.current;
  const parent = scope.parent;
  if (!parent) return scope.root;
  const on =
    parent.recorder ??
    (parent.of ? await recorderOf(parent.of.scope, parent.of.agent) : scope.root);
  scope.current = await openChild(on, agent, parent.toolName, parent.causedByEventId, {
    ...(parent.guardrail !== undefined ? parent.guardrail : { asToolOf: parent.toolName }),
    // Run again, a call of this agent goes on here by itself: nothing it does goes unseen.
    ...(scope.recordsEveryCall === true ? { [RECORDS_EVERY_CALL_FIELD]: true } : {}),
  });
  // The child run paused before: its recorded calls are behind the RunState it goes on from.
  if (parent.continuing) scope.current.replay?.skipAll();
  if (agent) scope.currentAgent = agent;
  return scope.current;
}
