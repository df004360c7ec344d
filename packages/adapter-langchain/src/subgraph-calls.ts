import {
  type EventStore,
  type LedgerEvent,
  ledgerCommand,
  NotFoundError,
  readWholeRun,
} from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord } from "./plain-json.js";
import { runsBelow } from "./runs-below.js";
import { SUBGRAPH_FIELD } from "./subgraph-runs.js";
import { payloadThreadId } from "./thread-run-id.js";

// restoreMessages on the run of a graph whose calls ran inside a subgraph: they are recorded in
// the subgraph's child run (subgraph-runs.ts), the handler's run has none. Restored there, it
// would answer no call, and the plain-graph recipe would then run the abandoned ones again.

/** A subgraph invocation's child run that recorded calls: where its turn is restored from. */
export interface SubgraphCalls {
  runId: string;
  /** The node that ran the subgraph. */
  node: string;
  /** Its LangGraph checkpoint namespace: the `checkpoint_ns` its state is updated at. */
  checkpointNs: string;
}

const isCall = (event: LedgerEvent) =>
  event.type === "model.requested" || event.type === "tool.requested";

/** True when `events` hold a call of thread `threadId` (any, without one; or recorded without a thread). */
export function hasCallIn(events: readonly LedgerEvent[], threadId: string | undefined): boolean {
  return events.some((event) => {
    if (!isCall(event)) return false;
    const thread = recordedThreadId(event);
    return threadId === undefined || thread === undefined || thread === threadId;
  });
}

/**
 * The subgraph child runs below the run `address` (at any depth, in the order they started)
 * that recorded calls in thread `threadId` (any thread, without one); with `after`, calls
 * committed after that session commit cursor.
 */
export async function subgraphRunsWithCalls(
  store: EventStore,
  address: { sessionId: string; runId: string },
  threadId: string | undefined,
  after = 0,
): Promise<SubgraphCalls[]> {
  const below = await runsBelow(store, address.sessionId, address.runId);
  below.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const found: SubgraphCalls[] = [];
  for (const run of below) {
    const events = await readWholeRun(store, { sessionId: address.sessionId, runId: run.runId });
    const started = events[0]?.payload;
    const subgraph = isRecord(started) ? started[SUBGRAPH_FIELD] : undefined;
    if (!isRecord(subgraph) || typeof subgraph.checkpointNs !== "string") continue;
    if (threadId !== undefined && payloadThreadId(subgraph) !== threadId) continue;
    const later = after > 0 ? events.filter((event) => event.commitCursor > after) : events;
    if (!hasCallIn(later, threadId)) continue;
    const node = typeof subgraph.node === "string" ? subgraph.node : "";
    found.push({ runId: run.runId, node, checkpointNs: subgraph.checkpointNs });
  }
  return found;
}

/**
 * The refusal of restoring a run whose thread's calls are all in subgraphs' child runs, or
 * (`ownCalls`) whose own last turn asks for nothing more while calls after it are in those
 * runs: names them, and the calls that restore the latest one (the last listed) into its
 * subgraph's state.
 */
export function callsInSubgraphsError(
  store: EventStore,
  address: { sessionId: string; runId: string },
  threadId: string | undefined,
  subgraphs: readonly SubgraphCalls[],
  ownCalls = false,
): NotFoundError {
  const latest = subgraphs.at(-1) as SubgraphCalls;
  const thread = threadId === undefined ? "" : ` in LangGraph thread ${JSON.stringify(threadId)}`;
  const listed = subgraphs
    .map(
      (subgraph) =>
        `${subgraph.runId} (node ${JSON.stringify(subgraph.node)}, checkpoint_ns ${JSON.stringify(subgraph.checkpointNs)})`,
    )
    .join(", ");
  const options = threadId === undefined ? "" : `, { threadId: ${JSON.stringify(threadId)} }`;
  const configurable = `{ ${threadId === undefined ? "" : `thread_id: ${JSON.stringify(threadId)}, `}checkpoint_ns: ${JSON.stringify(latest.checkpointNs)} }`;
  return new NotFoundError(
    (ownCalls
      ? `run ${address.runId} of session ${address.sessionId} recorded calls of its own, but its last turn${thread} is not the thread's latest: the calls after it ran inside subgraphs, recorded in their child runs: ${listed}. `
      : `run ${address.runId} of session ${address.sessionId} recorded no call${thread}: its calls ran inside subgraphs, recorded in their child runs: ${listed}. `) +
      `Restore the subgraph's run (the last listed is the latest) and answer its tools node in the subgraph's state: ` +
      `restoreMessages(store, { sessionId: ${JSON.stringify(address.sessionId)}, runId: ${JSON.stringify(latest.runId)} }${options}), ` +
      `then, with its pendingToolCalls empty, graph.updateState({ configurable: ${configurable} }, { messages: toolMessages }, "tools") and graph.invoke(null, config) ` +
      `(README: "A ToolNode inside a subgraph"). Or list them: ${ledgerCommand(store, "inspect", [address.sessionId])}`,
    { ...address, ...(threadId === undefined ? {} : { threadId }), subgraphs: [...subgraphs] },
    "$.runId",
  );
}
