import {
  type Attempt,
  AWAITING_DECISION_FIELD,
  type AwaitedCallView,
  type JsonObject,
  type SessionRecorder,
} from "@agent-ledger/core";
import { isRecord, toJsonValue } from "./plain-json.js";
import type { RunTree } from "./run-tree.js";
import type { SubgraphRuns } from "./subgraph-runs.js";
import { isInterrupt } from "./tool-attempt.js";
import { UNRESOLVED_ATTEMPT_INTERRUPT } from "./unresolved-question.js";

/** `payload.kind` of the checkpoint recording a pause (never LedgerCheckpointSaver's own). */
export const INTERRUPT_PAUSE_KIND = "langgraph.interrupt";

/**
 * What ends a pause besides a call made or decided: the chain a resumed graph starts with (a
 * node that paused may go on without making any call).
 */
const ENDED_BY = ["x.langchain.chain.started"];

/** How long an interrupt's value may be in `decideWith`; the CLI shows 200 characters of it. */
const MAX_VALUE = 80;
/** How many values `decideWith` lists. */
const MAX_VALUES = 3;

/**
 * Where a pause on a call is recorded: the ledger run of its attempt (`runId`: a subgraph's
 * child run, or the handler's), or, for a node that paused outside any call, the run its
 * LangChain `metadata` (thread, checkpoint namespace) records in.
 */
type PausedIn = { runId: string } | { metadata: Record<string, unknown> | undefined };

/** A recorded tool attempt as a pause names it, with the run it is recorded in. */
export interface AwaitedCall {
  call: AwaitedCallView;
  /** The ledger run of the attempt: the run that waits on it when it pauses. */
  runId: string;
}

/** A call (a tool's, or a node's) that paused at `interrupt()`, and what it asks. */
interface PausedCall {
  call: AwaitedCallView;
  values: unknown[];
  in: PausedIn;
}

/** The call a recorded tool attempt is, as a pause names it (as its `tool.requested` says). */
export function awaitedCall(attempt: Attempt): AwaitedCall {
  const call: AwaitedCallView = { name: attempt.name ?? "tool" };
  if (attempt.toolCallId !== undefined) call.toolCallId = attempt.toolCallId;
  call.args = attempt.request;
  return { call, runId: attempt.runId };
}

/**
 * The calls that paused at a LangGraph `interrupt()` in each invocation (by the LangChain runId
 * of its root), recorded as a pause when the invocation ends paused: a checkpoint whose
 * `awaitingDecision` names them, which `inspectSession` reads (`RunView.awaitingDecision`), in
 * the run that made each call. A call of a subgraph pauses the subgraph's child run, which holds
 * its attempt (its `unresolved-attempt`, its decisions), not the handler's: that run waits on
 * its child, and is reported running, as core reports a run whose child run is paused. One
 * pause per run, naming the run's own calls.
 *
 * Written at the end of the invocation rather than at each interrupt: LangGraph finishes the
 * other tasks of the step first, and their calls would end a pause written before them. An
 * interrupt is the call's where `interrupt()` threw it: the same interrupt, met again as it
 * bubbles up (the tool node, the node, a subgraph's node, a tool around a subgraph), is not
 * counted again.
 */
export class InterruptPauses {
  readonly #runs: RunTree;
  readonly #subgraphs: SubgraphRuns;
  readonly #paused = new Map<string, PausedCall[]>();
  /** The interrupts (GraphInterrupt's entries, or the error without any) already counted. */
  readonly #seen = new WeakSet<object>();
  /** The LangGraph node of each chain in progress that runs in one, with the chain's metadata. */
  readonly #nodes = new Map<
    string,
    { node: string; metadata: Record<string, unknown> | undefined }
  >();
  /** The calls ledgerMiddleware asks a person about, by the interrupt value it asks with. */
  readonly #asked = new WeakMap<object, AwaitedCall>();

  constructor(runs: RunTree, subgraphs: SubgraphRuns) {
    this.#runs = runs;
    this.#subgraphs = subgraphs;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return { pausedInvocations: this.#paused.size, nodeChains: this.#nodes.size };
  }

  /** A chain started (`metadata`: its own): a node's chain, or one inside a node. */
  chainStarted(runId: string, metadata: Record<string, unknown> | undefined): void {
    const node = metadata?.langgraph_node;
    if (typeof node === "string") this.#nodes.set(runId, { node, metadata });
  }

  /**
   * ledgerMiddleware asks a person about `call` (in flight at a crash) with `interrupt(value)`,
   * before the tool runs: the pause names that call rather than the tools node it paused in.
   */
  asking(value: object, call: AwaitedCall): void {
    this.#asked.set(value, call);
  }

  /**
   * LangChain's run `runId` ended with `error` (before the run tree forgets it). A tool run the
   * handler knows the call of, or a chain in a LangGraph node, that `interrupt()` paused: its
   * call is awaited.
   */
  ended(runId: string, error?: unknown): void {
    const node = this.#nodes.get(runId);
    this.#nodes.delete(runId);
    if (error === undefined || !isInterrupt(error)) return;
    const tool = this.#runs.tool(runId);
    // A chain inside a tool call (a lambda, a subgraph the tool runs) leaves it to that call.
    const inTool = tool === undefined && this.#runs.enclosingTool(runId)?.awaited !== undefined;
    const awaited: Omit<PausedCall, "values"> | undefined =
      tool !== undefined
        ? tool.awaited && { call: tool.awaited.call, in: { runId: tool.awaited.runId } }
        : node !== undefined
          ? { call: { name: node.node }, in: { metadata: node.metadata } }
          : undefined;
    if (awaited === undefined || inTool) return;
    const values = this.#unseen(error);
    if (values === undefined) return;
    const root = this.#runs.rootOf(runId);
    const paused = this.#paused.get(root) ?? [];
    // A node that asked about a crashed call (ledgerMiddleware's question): that call.
    const asked = values.map((value) =>
      value !== null && typeof value === "object" ? this.#asked.get(value) : undefined,
    );
    if (asked.length > 0 && asked.every((known) => known !== undefined))
      for (const [index, known] of asked.entries()) {
        const { call, runId: attemptRun } = known as AwaitedCall;
        paused.push({ call, values: [values[index]], in: { runId: attemptRun } });
      }
    else paused.push({ ...awaited, values });
    this.#paused.set(root, paused);
  }

  /**
   * The invocation `runId` ended (or another run did: nothing then). Ended paused (LangGraph
   * returned, its interrupts in `__interrupt__`): the pause is recorded, in each run that made
   * a paused call, naming its calls. How to go on (`decideWith`) is said of the invocation's
   * interrupts, all of them: LangGraph takes one answer per interrupt id when there are several,
   * whichever runs paused. An interrupt that reaches the caller (a tool invoked outside a graph),
   * or any other failure, is no pause.
   */
  async invocationEnded(runId: string, error?: unknown): Promise<void> {
    const paused = this.#paused.get(runId);
    if (paused === undefined) return;
    this.#paused.delete(runId);
    if (error !== undefined) return;
    const byRun = new Map<SessionRecorder, PausedCall[]>();
    for (const call of paused) {
      const recorder = await this.#recorderOf(call.in);
      byRun.set(recorder, [...(byRun.get(recorder) ?? []), call]);
    }
    const interrupts = paused.reduce((count, { values }) => count + values.length, 0);
    for (const [recorder, calls] of byRun)
      await recorder.checkpoint(pausePayload(calls, interrupts));
  }

  /** The recorder of the run a pause on a call is recorded in (see `PausedIn`). */
  async #recorderOf(where: PausedIn): Promise<SessionRecorder> {
    if ("runId" in where) return this.#subgraphs.recorderOf(where);
    // A node's pause: one inside a tool call is left to that call (see `ended`).
    const { recorder } = await this.#subgraphs.recordedIn({
      metadata: where.metadata,
      insideTool: undefined,
    });
    return recorder;
  }

  // The values of the interrupts of `error` not counted yet (undefined: none is new), counting
  // them now.
  #unseen(error: unknown): unknown[] | undefined {
    const listed = (error as { interrupts?: unknown }).interrupts;
    const entries = (Array.isArray(listed) ? listed : []).filter(
      (entry): entry is object => entry !== null && typeof entry === "object",
    );
    const fresh = entries.filter((entry) => !this.#seen.has(entry));
    const errorSeen = this.#seen.has(error as object);
    for (const entry of [...entries, error as object]) this.#seen.add(entry);
    if (entries.length === 0) return errorSeen ? undefined : [];
    if (fresh.length === 0) return undefined;
    return fresh.map((entry) => (entry as { value?: unknown }).value);
  }
}

/**
 * The checkpoint payload of a pause on `paused`, calls of one run, in an invocation that
 * paused at `interrupts` interrupts in all.
 */
function pausePayload(paused: readonly PausedCall[], interrupts: number): JsonObject {
  return {
    kind: INTERRUPT_PAUSE_KIND,
    [AWAITING_DECISION_FIELD]: {
      calls: paused.map(({ call }) => ({ ...call })) as unknown as JsonObject[],
      decideWith: decideWith(
        paused.flatMap(({ values }) => values),
        interrupts,
      ),
      endedBy: ENDED_BY,
    },
  };
}

/**
 * How the app goes on, in LangGraph's words, with what the graph asks the person (`values`, the
 * run's questions, of the invocation's `interrupts`). One interrupt: its question first
 * (`agent-ledger inspect` shows 200 characters). Several: LangGraph takes one answer per
 * interrupt id, said first, then the questions.
 */
function decideWith(values: readonly unknown[], interrupts: number): string {
  const asked = values.filter((value) => value !== undefined);
  const shown = asked.slice(0, MAX_VALUES).map(valueText);
  if (asked.length > MAX_VALUES) shown.push(`and ${asked.length - MAX_VALUES} more`);
  if (interrupts > 1) {
    const questions = shown.length > 0 ? `, a person's answers to ${shown.join("; ")}` : "";
    return `new Command({ resume: { [interrupt id]: answer } }) on the graph's thread (LangGraph interrupts, ids in result.__interrupt__)${questions}`;
  }
  const question = shown.length > 0 ? `a person's answer to ${shown[0]}` : "a person's answer";
  return `${question} (LangGraph interrupt()): resume the graph's thread with new Command({ resume: answer })`;
}

/**
 * An interrupt's value as text: a string quoted, ledgerMiddleware's question about a crashed
 * call by its question, anything else as JSON; cut at MAX_VALUE.
 */
function valueText(value: unknown): string {
  if (isRecord(value) && value.type === UNRESOLVED_ATTEMPT_INTERRUPT)
    return valueText(String(value.question));
  const text = (typeof value === "string" ? value : JSON.stringify(toJsonValue(value)))
    .replace(/\s+/g, " ")
    .trim();
  const cut = text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
  return typeof value === "string" ? `"${cut}"` : cut;
}
