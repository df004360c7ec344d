import { LedgerError, rebuiltError, type ToolEffect } from "@agent-ledger/core";
import type { ApplyPatchTool, Editor, RunContext, Shell, ShellTool } from "@openai/agents";
import { approvalCallId } from "./approval-decisions.js";
import { recordedCall, UNDEFINED_OUTPUT_METADATA } from "./ledger-state.js";
import type { LedgerToolOptions } from "./ledger-tool.js";
import { EDITOR_METHODS, localCallId, noteLocalCall } from "./local-call-ids.js";
import { recordedOutput } from "./model-json.js";
import { assertLedgerLocalToolArguments } from "./option-checks.js";
import {
  callContext,
  openAttempt,
  recordedCallNeedsApproval,
  replayedOutput,
  toolCallRecorder,
} from "./recorded-tool-call.js";
import { currentScope, ledgerStep, refused } from "./scope.js";
import { declareToolEffect } from "./tool-effects.js";

/** A tool whose calls run on this machine without a function of their own to wrap. */
export type LocalTool = ShellTool | ApplyPatchTool;

/**
 * What a shell command or a patch does unless declared otherwise: it writes (a deploy, a deleted
 * file), and running it twice is not known to be safe.
 */
const DEFAULT_EFFECT: ToolEffect = { kind: "write", idempotent: false };

type ApprovalPolicy = (
  runContext: RunContext,
  action: unknown,
  callId?: string,
) => Promise<boolean>;

/** A local shell tool (its commands run here), not a hosted one (run by the provider). */
export function isLocalShell(tool: { type: string; shell?: unknown }): boolean {
  return tool.type === "shell" && typeof tool.shell === "object" && tool.shell !== null;
}

/**
 * Records a local shell tool's commands (`shellTool({ shell })`) or an apply-patch tool's
 * operations (`applyPatchTool({ editor })`), as ledgerTool records a function tool's calls: a
 * `tool.requested` (the action or operation as its arguments, the call's id as `toolCallId`)
 * committed before the shell or editor is called, then `tool.completed` with what it returned, or
 * `tool.failed` with what it threw. On a resumed run a recorded call is answered from the ledger
 * (the shell or editor is not called), and one a crash left in flight becomes an approval
 * interruption unless declared `idempotent: true`. Default `{ effect: "write", idempotent: false }`.
 *
 * The tool object is changed in place (the SDK finds it by name in the agent's tools, and keys
 * approvals by it): its `shell` or `editor` is replaced by one that records and calls the
 * original, and its `needsApproval` (and `onApproval`) by ones that ask about a call the ledger
 * holds as in flight or rejected. The SDK gives a shell only the action and an editor only the
 * operation, never the call's id: the id is known from the model response that asked for the
 * call, or from the tool's `needsApproval`, which gets the same object with its id (see
 * local-call-ids.ts). A call whose id is not known is refused, not run.
 *
 * The SDK turns an error a shell or editor throws into output for the model and goes on; so a
 * refusal (a store failure, a call the ledger cannot place) is noted on the run, which stops at
 * its next model call or at its end, rejecting with the LedgerError.
 */
export function ledgerLocalTool<T extends LocalTool>(tool: T, options: LedgerToolOptions = {}): T {
  assertLedgerLocalToolArguments(tool, options);
  const effect: ToolEffect = {
    kind: options.effect ?? DEFAULT_EFFECT.kind,
    idempotent: options.idempotent ?? DEFAULT_EFFECT.idempotent,
  };
  if (declareToolEffect(tool, effect, options)) return tool;

  // The shell's policy takes a shell action, the editor's a patch operation: the same here.
  const ownNeedsApproval = tool.needsApproval as ApprovalPolicy;
  const needsApproval: ApprovalPolicy = async (runContext, action, callId) => {
    noteLocalCall(action, callId);
    const run = currentScope()?.run;
    const recorded = callId !== undefined && run ? recordedCall(run, callId) : undefined;
    const needed = recorded
      ? recordedCallNeedsApproval(run, recorded, effect.idempotent)
      : await ownNeedsApproval.call(tool, runContext, action, callId);
    // The agent run of this scope pauses (inside an agent tool, that tool call pauses with it).
    const scope = currentScope();
    if (needed && scope) scope.paused = true;
    return needed;
  };
  tool.needsApproval = needsApproval as never;
  const ownOnApproval = tool.onApproval;
  if (ownOnApproval)
    tool.onApproval = async (runContext, item) => {
      // A call the ledger asks about (in flight at a crash, or rejected before) is a person's to
      // decide, or the ledger's to apply a recorded decision to: left pending for them.
      const run = currentScope()?.run;
      if (run && recordedCall(run, approvalCallId(item)) !== undefined)
        return { approve: undefined } as unknown as { approve: boolean };
      return ownOnApproval.call(tool, runContext, item);
    };

  const record = (action: unknown, context: unknown, call: () => Promise<unknown>) =>
    runRecorded(tool.name, effect, options, action, context, call);
  if (tool.type === "shell") {
    const shell = tool.shell as Shell;
    const recording: Shell = Object.create(shell);
    // The SDK gives a shell no run context: nothing it could write there is watched.
    recording.run = (action) => record(action, undefined, () => shell.run(action)) as never;
    tool.shell = recording;
  } else {
    const editor = tool.editor;
    const recording: Editor = Object.create(editor);
    for (const method of EDITOR_METHODS) {
      // biome-ignore lint/suspicious/noExplicitAny: one wrapper for the three operations
      const own = editor[method] as (...args: any[]) => Promise<unknown>;
      // biome-ignore lint/suspicious/noExplicitAny: as above
      (recording as any)[method] = (operation: unknown, context: unknown) =>
        record(
          operation,
          (context as { runContext?: { context?: unknown } } | undefined)?.runContext?.context,
          () => own.call(editor, operation, context),
        );
    }
    tool.editor = recording;
  }
  return tool;
}

/** Runs one shell action or patch operation `action` of tool `name` as a recorded call. */
async function runRecorded(
  name: string,
  effect: ToolEffect,
  options: LedgerToolOptions,
  action: unknown,
  context: unknown,
  call: () => Promise<unknown>,
): Promise<unknown> {
  const scope = currentScope();
  const recorder = await toolCallRecorder(options, scope, name);
  const callId = localCallId(action);
  if (callId === undefined)
    throw refused(
      new LedgerError(
        "invalid-argument",
        `tool ${name}: the ledger cannot tell which call this ${name} action belongs to (neither the model response that asked for it, the tool's needsApproval nor the SDK's start of it on an agent given to instrumentAgent named it): refusing to run it unrecorded`,
      ),
    );
  const runContext = callContext(context);
  const attempt = await ledgerStep(() =>
    openAttempt(recorder, scope, {
      callId,
      name,
      args: recordedOutput(action),
      effect,
      metadata: undefined,
    }),
  );
  const replayed = attempt.replayed;
  runContext.answered(scope?.run, attempt);
  if (replayed?.status === "completed") return replayedOutput(replayed);
  // The SDK turns the error into what the model was told then (stderr, a failed patch).
  if (replayed?.status === "failed") throw rebuiltError(replayed.error);
  if (replayed?.status === "abandoned") throw new Error(`Tool call rejected: ${replayed.reason}`);
  let output: unknown;
  try {
    output = await call();
  } catch (error) {
    await runContext.recordChange(recorder, attempt);
    await ledgerStep(() => recorder.toolFailed(attempt, error));
    throw error;
  }
  await runContext.recordChange(recorder, attempt);
  await ledgerStep(() =>
    recorder.toolCompleted(
      attempt,
      recordedOutput(output),
      output === undefined ? { metadata: { ...UNDEFINED_OUTPUT_METADATA } } : {},
    ),
  );
  return output;
}
