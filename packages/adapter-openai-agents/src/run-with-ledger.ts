import {
  ConflictError,
  findLedgerError,
  type JsonObject,
  LedgerError,
  ledgerCommand,
  type Redaction,
  RunClosedError,
  SessionRecorder,
} from "@agent-ledger/core";
import { RunContext } from "@openai/agents";
import { agentCallsMadeAgain } from "./agent-calls-made-again.js";
import { assertStartingAgent } from "./agent-mismatch.js";
import type { AnyAgent } from "./any-agent.js";
import { applyRecordedDecisions, recordDecisions } from "./approval-decisions.js";
import {
  isRunStateCheckpoint,
  loadRunStateCheckpoint,
  type RunStateCheckpoint,
} from "./checkpoint.js";
import { applyRecordedContextChanges } from "./context-changes.js";
import { instrumentAgent } from "./instrument-agent.js";
import type {
  LedgerRunOptions,
  ResumeRunOptions,
  RunWithLedgerOptions,
} from "./ledger-run-options.js";
import { ledgerRunner, runSegment } from "./ledger-runner.js";
import {
  isCallEvent,
  loadRunState,
  recorderOfRun,
  runTree,
  skipRecordedCalls,
} from "./ledger-state.js";
import { runInputToJson } from "./model-json.js";
import { assertNoRunLeftInFlight } from "./open-run-refusal.js";
import { type RunInput, recordedRunInput } from "./recorded-input.js";
import { readResumedRun } from "./resumed-run.js";
import {
  type AnyResult,
  cancelled,
  failed,
  finish,
  type LedgerRunResult,
  type LedgerStreamedRun,
} from "./run-ends.js";
import { assertResumeRunArguments, assertRunWithLedgerArguments } from "./run-option-checks.js";
import { assertCurrentState } from "./run-state-position.js";
import { agentActor, type LedgerScope } from "./scope.js";
import { openAiAgentsVersion } from "./sdk-version.js";
import { skippedApprovals } from "./skipped-approvals.js";

const FRAMEWORK = "openai-agents";

const inFlight = (call: { status: string }) => call.status === "requested";

// A recorder's redaction: the caller's, unless `false` (model requests recorded as built).
function redactionOf(options: LedgerRunOptions): { redact?: Redaction } {
  return options.redact !== undefined && options.redact !== false ? { redact: options.redact } : {};
}

// The run's own `redact`, `false` included, as its scope keeps it.
function runRedaction(options: LedgerRunOptions): { redact?: Redaction | false } {
  return options.redact !== undefined ? { redact: options.redact } : {};
}

/**
 * The run was stopped by the caller's signal: closed as `run.cancelled`, with the runs it
 * opened below itself, the signal's reason in its own words. What was in flight is recorded
 * already (a model call aborted as `model.failed`; tools finish before the SDK stops).
 */
async function cancelledBySignal(
  scope: LedgerScope,
  signal: AbortSignal,
  result?: AnyResult,
): Promise<LedgerRunResult> {
  const why: unknown = signal.reason;
  const detail =
    why instanceof Error ? why.message : typeof why === "string" ? why : "no reason given";
  return cancelled(scope, result, `aborted by the caller's signal: ${detail}`);
}

// How a run that threw ended: stopped by the caller's signal (cancelled), else `failed`. A
// ledger failure stays the caller's error even then: the run is left open, to be resumed.
function endedBy(
  scope: LedgerScope,
  error: unknown,
  options: LedgerRunOptions,
): Promise<LedgerRunResult> {
  if (options.signal?.aborted && findLedgerError(error) === undefined)
    return cancelledBySignal(scope, options.signal);
  return failed(scope, error);
}

/**
 * Runs an agent with every model call, tool call, handoff and interruption recorded on the
 * ledger (§9). Handoff targets record on child runs; at every interruption and at the end the
 * serialized RunState is saved as `checkpoint.saved`. If the ledger cannot commit a request,
 * the model or tool is not called and this rejects.
 */
export function runWithLedger(
  agent: AnyAgent,
  input: RunInput,
  options: RunWithLedgerOptions & { stream: true },
): Promise<LedgerStreamedRun>;
export function runWithLedger(
  agent: AnyAgent,
  input: RunInput,
  options: RunWithLedgerOptions & { stream?: false | undefined },
): Promise<LedgerRunResult>;
export async function runWithLedger(
  agent: AnyAgent,
  input: RunInput,
  options: RunWithLedgerOptions,
): Promise<LedgerRunResult | LedgerStreamedRun> {
  assertRunWithLedgerArguments(agent, input, options);
  instrumentAgent(agent, { mcpToolEffect: options.mcpToolEffect });
  // Before anything is recorded: an input that is not JSON, a runner's model that is not one.
  const recordedInput = runInputToJson(input);
  const runner = ledgerRunner(options);
  // A run given its own id is the caller's explicit choice; one with a generated id would go
  // around a run a crash left in flight, making its calls again.
  if (options.runId === undefined) await assertNoRunLeftInFlight(options.store, options.sessionId);
  const root = new SessionRecorder({
    store: options.store,
    sessionId: options.sessionId,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    actor: agentActor(agent.name),
    ...redactionOf(options),
  });
  await root
    .startRun({ agent: agent.name, framework: FRAMEWORK, sdkVersion: openAiAgentsVersion() })
    .catch((error: unknown) => {
      throw runExists(error, root) ?? error;
    });
  await root.recordInput(recordedInput);
  const scope: LedgerScope = {
    root,
    current: root,
    currentAgent: agent,
    run: { ...loadRunState([]), ...runRedaction(options) },
  };
  if (options.stream) {
    const stream = await runSegment(runner, agent, input, scope, options, { stream: true });
    const { signal } = options;
    const done = (async () => {
      await stream.completed.catch(() => undefined);
      if (stream.error) throw stream.error;
      if (stream.cancelled)
        return signal?.aborted
          ? cancelledBySignal(scope, signal, stream)
          : cancelled(scope, stream);
      return finish(scope, stream);
    })().catch((error) => endedBy(scope, error, options));
    // The caller may never await `done`; its rejection is theirs to observe, not a crash.
    done.catch(() => undefined);
    return { sessionId: root.sessionId, runId: root.runId, stream, done };
  }
  try {
    const result = await runSegment(runner, agent, input, scope, options);
    return await finish(scope, result);
  } catch (error) {
    return endedBy(scope, error, options);
  }
}

/**
 * The refusal of `runWithLedger`'s first write on a `runId` the session already holds, told in
 * this adapter's terms: core's message points to `SessionRecorder.resume`, which an app of this
 * adapter does not call. A run a crash left open is continued with `resumeRun`; one that ended
 * accepts no more events (`resumeRun` returns what it recorded). Code, class and fields are
 * core's. Undefined for any other error.
 */
function runExists(error: unknown, root: SessionRecorder): LedgerError | undefined {
  const { sessionId, runId } = root;
  const resume = "resumeRun(agent, { store, sessionId, runId })";
  if (LedgerError.isInstance(error, "conflict") && error.expectedSeq === 0) {
    const { expectedSeq, actualSeq } = error;
    return new ConflictError({
      expectedSeq,
      actualSeq,
      sessionId,
      runId,
      message: `run ${runId} of session ${sessionId} already has ${actualSeq} events: runWithLedger starts a new run, so nothing was written. To continue it (a process died while it ran), call ${resume}; to start another run beside it, give another runId.`,
    });
  }
  const status = LedgerError.isInstance(error, "run-closed") ? error.details?.status : undefined;
  if (typeof status !== "string") return undefined;
  return new RunClosedError({
    sessionId,
    runId,
    status,
    message: `run ${runId} of session ${sessionId} already exists and is ${status}: runWithLedger starts a new run, so nothing was written. ${resume} returns what it recorded; to start another run, give another runId (or none).`,
  });
}

/**
 * Continues a recorded run (§7, §9). A completed run is read back from the ledger. A run
 * paused at an interruption goes on from its RunState checkpoint (`RunState.fromString`,
 * refused if another @openai/agents version wrote it) or from the `state` you decided on.
 * After a crash between checkpoints the agent is re-executed from its recorded input: every
 * model response and tool result in the ledger is answered from the ledger, then the run is
 * live again; a non-idempotent tool call that was in flight becomes an approval interruption.
 */
export async function resumeRun(
  agent: AnyAgent,
  options: ResumeRunOptions,
): Promise<LedgerRunResult> {
  assertResumeRunArguments(agent, options);
  instrumentAgent(agent, { mcpToolEffect: options.mcpToolEffect });
  const { store, sessionId, runId } = options;
  const { events, rootEvents } = await readResumedRun(store, sessionId, runId);
  const terminal = rootEvents.find((event) =>
    ["run.completed", "run.failed", "run.cancelled"].includes(event.type),
  );
  if (terminal?.type === "run.completed") {
    return {
      sessionId,
      runId,
      status: "completed",
      // As recorded: readResumedRun put back what the recorder escaped or moved to blobs.
      finalOutput: (terminal.payload as JsonObject).output ?? null,
      interruptions: [],
      inFlightAtCrash: [],
      state: undefined,
      result: undefined,
    };
  }
  if (terminal)
    throw new LedgerError(
      "run-closed",
      `run ${runId} is ${terminal.type.slice(4)}: nothing to resume (a closed run takes no more events). To do its work again, start a new run with runWithLedger (another runId); ${ledgerCommand(store, "inspect", [sessionId])} shows how this one ended`,
    );
  // Another agent would record the run's calls under its name: refused before anything is written.
  assertStartingAgent(agent, runId, rootEvents);
  const tree = runTree(events, runId);
  const treeEvents = events.filter((event) => tree.has(event.runId));
  // A stale or foreign state would run again calls the ledger holds as done, or override a
  // decision recorded since: refused here, before anything is recorded or run.
  if (options.state !== undefined)
    assertCurrentState(options.state, { sessionId, runId, rootEvents, treeEvents });
  const root = await SessionRecorder.resume({
    store,
    sessionId,
    runId,
    actor: agentActor(agent.name),
    ...redactionOf(options),
  });
  const runner = ledgerRunner(options);
  const scope: LedgerScope = {
    root,
    current: root,
    currentAgent: agent,
    run: { ...loadRunState(treeEvents), ...runRedaction(options) },
  };
  // Only with a tool call in flight (a resume's rare path).
  if ([...scope.run.recordedToolCalls.values()].some((calls) => calls.some(inFlight)))
    scope.run.safeAgentCalls = agentCallsMadeAgain(sessionId, treeEvents);
  const checkpoint = [...rootEvents].reverse().find(isRunStateCheckpoint);
  const atCheckpoint =
    checkpoint !== undefined &&
    (checkpoint.payload as unknown as RunStateCheckpoint).kind === "interruption" &&
    !treeEvents.some((event) => event.commitCursor > checkpoint.commitCursor && isCallEvent(event));

  const payload = atCheckpoint ? (checkpoint.payload as unknown as RunStateCheckpoint) : undefined;
  // Loaded with a state given too: a checkpoint another SDK version wrote is refused.
  const loaded = payload && (await loadRunStateCheckpoint(agent, payload));
  const state = loaded && (options.state ?? loaded);
  // A call in flight a person approved that the SDK would not make going on from the state:
  // the run is re-executed from its input instead, where it runs. Decisions on a state given are
  // recorded first; the run is then resumed from what the ledger holds.
  const skipped = state !== undefined && skippedApprovals(state, scope).length > 0;
  if (skipped && options.state) {
    await recordDecisions(scope, options.state, treeEvents);
    const { state: decided, ...resumed } = options;
    return resumeRun(agent, { ...resumed, context: options.context ?? decided._context.context });
  }
  // Until the run goes on, an error is the resume's own (a RunState input that no longer loads):
  // the run is left as the crash left it, not closed as failed.
  let goingOn = false;
  try {
    if (payload && state && !skipped) {
      // The app's context for the tools, not the JSON copy the checkpoint saved (as
      // RunState.fromStringWithContext's merge: the approvals on the state kept).
      // What the recorded calls wrote into the context is given to it, as a re-execution would.
      if (options.context !== undefined) {
        state._context.context =
          options.context instanceof RunContext ? options.context.context : options.context;
        applyRecordedContextChanges(treeEvents, state._context.context);
      }
      for (const callId of Array.isArray(payload.replayApprovals) ? payload.replayApprovals : [])
        if (typeof callId === "string") scope.run.replayApprovals.add(callId);
      // Decisions a person made on this checkpoint before the process died are not asked again.
      if (!options.state) applyRecordedDecisions(state, scope);
      // Everything recorded happened before the checkpoint: what comes next is live.
      skipRecordedCalls(root);
      if (payload.currentRunId !== runId) {
        scope.current = await recorderOfRun(
          options.store,
          options.sessionId,
          payload.currentRunId,
          events,
          scope.run.redact,
        );
        skipRecordedCalls(scope.current);
      }
      scope.currentAgent = state.currentAgent;
      await recordDecisions(scope, state, treeEvents);
      goingOn = true;
      let result = await runSegment(runner, agent, state, scope, options);
      // A recorded call met again on the way (inside an agent tool the person let go on) that
      // a person already decided on, in the SDK or with `agent-ledger resolve`, is not asked
      // again. Only decisions on recorded attempts: a live call that reuses a call id is new.
      while (
        result.interruptions.length > 0 &&
        applyRecordedDecisions(result.state, scope, { attemptsOnly: true })
      )
        result = await runSegment(runner, agent, result.state, scope, options);
      return await finish(scope, result, checkpoint);
    }
    // Crash between checkpoints, or an approved call the SDK would skip (above): re-execute from
    // the recorded input, answering from the ledger.
    const inputEvent = rootEvents.find((event) => event.type === "input.received");
    if (!inputEvent)
      throw new LedgerError("not-found", `run ${runId} has no recorded input to re-execute from`);
    // Resolved by readResumedRun (a long input is a blob in the stored event).
    const recorded = (inputEvent.payload as JsonObject).input;
    const started = rootEvents.find((event) => event.type === "run.started")?.payload;
    const input = await recordedRunInput(agent, recorded, {
      sdkVersion: (started as JsonObject | undefined)?.sdkVersion,
      context: options.context,
    });
    await root.recordInput(recorded ?? null);
    goingOn = true;
    let result = await runSegment(runner, agent, input, scope, options);
    while (result.interruptions.length > 0 && applyRecordedDecisions(result.state, scope)) {
      result = await runSegment(runner, agent, result.state, scope, options);
    }
    return await finish(scope, result);
  } catch (error) {
    if (!goingOn) throw error;
    return endedBy(scope, error, options);
  }
}
