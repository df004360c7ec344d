import type { EventStore, Redaction } from "@agent-ledger/core";
import type { ModelProvider, Runner } from "@openai/agents";
import type { McpToolEffect } from "./mcp-tools.js";
import type { AnyRunState } from "./run-ends.js";

export interface LedgerRunOptions {
  store: EventStore;
  sessionId: string;
  /** Its configuration (model provider, settings, filters) is reused; default `new Runner()`. */
  runner?: Runner;
  /** Model provider when no runner is given (e.g. a fake provider in tests). */
  modelProvider?: ModelProvider;
  maxTurns?: number;
  /**
   * The app's context, passed to the SDK's run (`context`): tools, guardrails, instructions
   * and hooks get it as `runContext.context`. On a run resumed from a RunState checkpoint it
   * takes the place of the context the state saved (a copy as JSON), the state's approvals
   * kept. The SDK saves it in the RunState, so it is in the run's checkpoints as JSON.
   */
  context?: unknown;
  /**
   * Stops the run (the SDK's `signal`): a model call in flight is aborted and recorded as
   * `model.failed`, none is made after, and the run is closed as `run.cancelled` (with the
   * runs it opened below itself): the result's `status` is `"cancelled"`.
   */
  signal?: AbortSignal;
  /**
   * What to remove from every payload the run records (requests, responses, tool arguments
   * and results, errors), before it is hashed: core's `Redaction`, a list of paths
   * (`"request.modelSettings.providerData.user"`, `"**.ssn"`) or a function, applied by the
   * recorders of the run and of its child runs. Credentials are removed from model requests
   * whatever it says (`DEFAULT_CREDENTIAL_PATHS`, and any credential key of the model
   * settings, in any case); `false` records model requests as built, credentials and all.
   */
  redact?: Redaction | false;
  /**
   * Declares the effect of the tools of the agents' MCP servers, by tool name (`McpToolEffect`):
   * `instrumentAgent`'s option, given to every agent of the run. A tool it says nothing of is
   * `{ effect: "unknown", idempotent: false }`: one in flight at a crash is asked about.
   */
  mcpToolEffect?: McpToolEffect;
}

export interface RunWithLedgerOptions extends LedgerRunOptions {
  /** Defaults to a new UUIDv7. */
  runId?: string;
  /** Run in streaming mode: the result is `{ stream, done }`. */
  stream?: boolean;
}

export interface ResumeRunOptions extends LedgerRunOptions {
  runId: string;
  /**
   * The state of an interrupted run after a person approved or rejected its interruptions
   * (`result.state.approve(item)` / `.reject(item)`). Without it the last RunState checkpoint
   * is loaded, or, after a crash between checkpoints, the run is re-executed from its input.
   */
  state?: AnyRunState;
}
