import { Runner } from "@openai/agents";
import type { AnyAgent } from "./any-agent.js";
import { recordedRunnerGuardrails } from "./guardrails.js";
import { instrumentAgent } from "./instrument-agent.js";
import { ledgerModel, ledgerModelProvider } from "./ledger-model.js";
import type { LedgerRunOptions } from "./ledger-run-options.js";
import { noteStateLocalCalls } from "./local-call-ids.js";
import type { RunInput } from "./recorded-input.js";
import type { AnyResult, LedgerStreamedRun } from "./run-ends.js";
import { currentScope, enterAgent, type LedgerScope, runInScope } from "./scope.js";

/** A Runner with the same configuration whose models are recorded and whose handoffs are tracked. */
export function ledgerRunner(options: LedgerRunOptions): Runner {
  const config = (options.runner ?? new Runner()).config;
  const userFilter = config.callModelInputFilter;
  return new Runner({
    ...config,
    // Their agents' model calls record on child runs of theirs, as an agent's guardrails' do.
    ...recordedRunnerGuardrails(config),
    modelProvider: ledgerModelProvider(options.modelProvider ?? config.modelProvider),
    ...(typeof config.model === "object" && config.model !== null
      ? { model: ledgerModel(config.model) }
      : {}),
    // Awaited right before every model call with the agent about to be called: the one place
    // the SDK tells an awaited hook which agent is current (a handoff moves it).
    callModelInputFilter: async (args) => {
      const scope = currentScope();
      if (scope) {
        instrumentAgent(args.agent, { mcpToolEffect: options.mcpToolEffect });
        await enterAgent(scope, args.agent);
      }
      return userFilter ? userFilter(args) : args.modelData;
    },
  });
}

/** The options runWithLedger and resumeRun hand to the SDK's run. */
function sdkRunOptions(options: LedgerRunOptions) {
  return {
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
}

/**
 * Runs `agent` in the run's scope from `input` (a RunState goes on from where it paused) to its
 * end or next pause; with `{ stream: true }`, returns the SDK's stream of it instead.
 */
export function runSegment(
  runner: Runner,
  agent: AnyAgent,
  input: RunInput,
  scope: LedgerScope,
  options: LedgerRunOptions,
): Promise<AnyResult>;
export function runSegment(
  runner: Runner,
  agent: AnyAgent,
  input: RunInput,
  scope: LedgerScope,
  options: LedgerRunOptions,
  mode: { stream: true },
): Promise<LedgerStreamedRun["stream"]>;
export function runSegment(
  runner: Runner,
  agent: AnyAgent,
  input: RunInput,
  scope: LedgerScope,
  options: LedgerRunOptions,
  mode?: { stream: true },
): Promise<AnyResult> {
  if (typeof input !== "string" && !Array.isArray(input)) noteStateLocalCalls(input);
  const sdkOptions = sdkRunOptions(options);
  return runInScope(scope, () =>
    mode?.stream
      ? runner.run(agent, input, { stream: true, ...sdkOptions })
      : runner.run(agent, input, sdkOptions),
  );
}
