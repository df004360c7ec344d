import {
  type Attempt,
  isValidId,
  type JsonObject,
  type LedgerEvent,
  type ReplayCursor,
  type SessionRecorder,
  sha256Hex,
} from "@agent-ledger/core";
import { recordedThreadId, threadIdOf } from "./langchain-metadata.js";
import { abandonModelCallsLeftByCrash } from "./open-model-calls.js";
import { isRecord } from "./plain-json.js";
import type { ToolRun } from "./run-tree.js";
import { runsBelow } from "./runs-below.js";
import { threadIdFields } from "./thread-run-id.js";

// LangGraph subgraphs as child runs. LangGraph names where a call runs in the metadata of every
// callback: `langgraph_checkpoint_ns`, one `node:taskId` segment per graph level, `|`-joined
// (`supervisor:<task>|agent:<task>` for the agent node of a subgraph that the supervisor's node
// ran), with a numeric segment after a node's task for its second, third... subgraph invocation
// (`fn:<task>|1|agent:<task>`). A call's subgraph is its namespace without its own node's
// segment: "" for the root graph. Task ids are uuid5s of the checkpoint, the step and the node:
// the same task run again on resume (the pending task of the checkpoint it goes on from) has the
// same namespace, so its child run is named after it, and found again by any process.

/** The `run.started` payload field that names a subgraph's child run (see `SubgraphRuns`). */
export const SUBGRAPH_FIELD = "langgraphSubgraph";

/** The checkpoint namespace of a LangChain run (a call, a chain), "" outside a subgraph node. */
function checkpointNsOf(metadata: Record<string, unknown> | undefined): string {
  const ns = metadata?.langgraph_checkpoint_ns ?? metadata?.checkpoint_ns;
  return typeof ns === "string" ? ns : "";
}

/**
 * The checkpoint namespace a call records (`metadata.langchain.checkpointNs`, where in the graph
 * it ran): undefined outside a subgraph node, so that the field is left out.
 */
export function checkpointNsToRecord(
  metadata: Record<string, unknown> | undefined,
): string | undefined {
  return checkpointNsOf(metadata) || undefined;
}

/**
 * The subgraph invocation a run with checkpoint namespace `ns` runs in: `ns` without its last
 * segment (its own node's task); "" in the root graph.
 */
function subgraphOf(ns: string): string {
  const end = ns.lastIndexOf("|");
  return end < 0 ? "" : ns.slice(0, end);
}

/** The subgraph that ran the subgraph `scope` (its parent), "" for the root graph. */
function parentOf(scope: string): string {
  return subgraphOf(nodeTaskOf(scope));
}

/**
 * The node task that invoked the subgraph `scope`: its last `node:taskId` segment, without the
 * invocation number a node's second subgraph invocation has (`fn:<task>|1` -> `fn:<task>`).
 */
function nodeTaskOf(scope: string): string {
  const segments = scope.split("|");
  while (segments.length > 1 && /^\d+$/.test(segments.at(-1) ?? "")) segments.pop();
  return segments.join("|");
}

/**
 * True when the subgraph invocation `scope` is named after its node's task (`node:taskId`), as
 * every one is but a subgraph's compiled with `checkpointer: true` (`node`, the same in every
 * invocation of the thread).
 */
function hasTaskId(scope: string): boolean {
  const task = nodeTaskOf(scope);
  return task.slice(task.lastIndexOf("|") + 1).includes(":");
}

/** The node that invoked the subgraph `scope` (its actor id). */
function nodeOf(scope: string): string {
  const task = nodeTaskOf(scope);
  const segment = task.slice(task.lastIndexOf("|") + 1);
  const colon = segment.lastIndexOf(":");
  return colon > 0 ? segment.slice(0, colon) : segment;
}

/**
 * The child run of the subgraph invocation `scope` of LangGraph thread `threadId` under the
 * handler's run `rootRunId`: `<rootRunId>><threadId>><scope>` (`<rootRunId>><scope>` outside a
 * thread) when that is a valid ledger id, else `subgraph-sha256:<hex>`, the SHA-256 of their
 * JSON array. Derived, not random: a resumed process finds it again. (The thread keeps apart the
 * subgraphs compiled with `checkpointer: true`, whose namespace has no task ids.)
 */
export function subgraphRunId(
  rootRunId: string,
  threadId: string | undefined,
  scope: string,
): string {
  const plain = [rootRunId, ...(threadId !== undefined ? [threadId] : []), scope].join(">");
  if (isValidId(plain)) return plain;
  return `subgraph-sha256:${sha256Hex(JSON.stringify([rootRunId, threadId ?? null, scope]))}`;
}

/**
 * True when the run `replay` reads recorded a model call of LangGraph thread `threadId` without
 * its checkpoint namespace: a ledger written before subgraphs had child runs, which recorded
 * every call of the thread in the handler's run. Its calls are met there again on resume, so
 * that thread goes on recording there (flat), or a resume would not find them.
 */
function recordedFlat(replay: ReplayCursor | undefined, threadId: string): boolean {
  if (replay === undefined) return false;
  return replay.modelAttempts.some(({ requested }) => {
    if (recordedThreadId(requested) !== threadId) return false;
    const langchain = requested.metadata?.langchain;
    return !isRecord(langchain) || typeof langchain.checkpointNs !== "string";
  });
}

/**
 * The child runs of the LangGraph subgraph invocations the handler records: each invocation of
 * a compiled graph inside a node (added as a node, or invoked from a node's function) is a child
 * run of the run of the graph that invoked it (`parentRunId`), caused by that node's
 * `x.langchain.chain.started` when chains are recorded, and its model and tool calls are
 * recorded there. A child run is opened when the first call or chain of its subgraph starts, as
 * a child of the handler's recorder (which loads it when the handler's run was resumed or
 * reopened: its calls are met again as the handler's own are) and named after the invocation's
 * namespace (`subgraphRunId`). A thread recorded flat before (`recordedFlat`) stays flat.
 */
export class SubgraphRuns {
  readonly #root: () => Promise<SessionRecorder>;
  readonly #opened: (recorder: SessionRecorder) => void;
  /** The child runs opened on the handler's recorder, by thread and subgraph namespace. */
  #children = new Map<string, Promise<SessionRecorder>>();
  /** The handler's recorder the children were opened on; a reopened one opens them again. */
  #rootRecorder: SessionRecorder | undefined;
  /** The child recorders, by run: what an attempt's outcome is recorded on. */
  readonly #byRun = new Map<string, SessionRecorder>();
  /** The `x.langchain.chain.started` of each node task in progress: what a subgraph's run is caused by. */
  readonly #nodeEvents = new Map<string, string>();
  /** The threads recorded flat in the handler's run, by the recorder that read it. */
  readonly #flat = new Map<string, boolean>();
  /** Child runs were let go of (`invocationSettled`) while open: closing reads the session. */
  #released = false;

  constructor(hooks: {
    root: () => Promise<SessionRecorder>;
    /** Hears of each child recorder opened (its replay, on a resumed run). */
    opened: (recorder: SessionRecorder) => void;
  }) {
    this.#root = hooks.root;
    this.#opened = hooks.opened;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return {
      subgraphChildren: this.#children.size,
      subgraphRecorders: this.#byRun.size,
      nodeEvents: this.#nodeEvents.size,
      flatThreads: this.#flat.size,
    };
  }

  /** The handler's recorder was opened or reopened: children are opened on it again. */
  rootOpened(recorder: SessionRecorder): void {
    if (recorder === this.#rootRecorder) return;
    this.#rootRecorder = recorder;
    this.#children = new Map();
    this.#flat.clear();
  }

  /**
   * The one place that says which run a LangChain run (a model or tool call, a chain, a node's
   * pause) is recorded in, from what LangChain gave it: `metadata` (its callback's, or a node's
   * `configurable` for ledgerMiddleware: its thread and checkpoint namespace) and `insideTool`,
   * the running tool call it is made inside (`RunTree.enclosingTool`), if any. Inside a tool
   * call, in that call's run, even when the tool runs a graph (a sub-agent's calls are the
   * tool's); else in its subgraph's child run; else, or for a thread recorded flat, in the
   * handler's run. Returns its `recorder` and its subgraph (`scope`, "" for the handler's run),
   * what a tool call's run tree entry keeps for the calls made inside it.
   */
  async recordedIn(run: {
    metadata: Record<string, unknown> | undefined;
    insideTool: Pick<ToolRun, "scope"> | undefined;
  }): Promise<{ recorder: SessionRecorder; scope: string }> {
    const { metadata, insideTool } = run;
    const scope = insideTool?.scope ?? subgraphOf(checkpointNsOf(metadata));
    const root = await this.#root();
    if (scope === "") return { recorder: root, scope };
    const threadId = threadIdOf(metadata);
    if (threadId !== undefined && this.#isFlat(root, threadId)) return { recorder: root, scope };
    return { recorder: await this.#child(root, scope, threadId), scope };
  }

  /**
   * LangGraph runs part of the last invocation of `threadId` again, while the handler's recorder
   * goes on (another invocation is in progress: it was given a replay again, not reopened). The
   * thread's child runs are reopened (`SessionRecorder.reopen`): what their calls recorded is
   * met again as a resumed run's is, instead of being made again. No call of theirs is in
   * flight: no invocation of the thread is in progress.
   */
  async runAgain(threadId: string | undefined): Promise<void> {
    for (const [key, opened] of [...this.#children]) {
      if (JSON.parse(key)[0] !== (threadId ?? null)) continue;
      const reopening = opened.then(async (child) => {
        const reopened = await child.reopen();
        this.#byRun.set(reopened.runId, reopened);
        this.#opened(reopened);
        return reopened;
      });
      this.#children.set(key, reopening);
      await reopening;
    }
  }

  /** The child recorder that made `attempt` (its outcome is recorded there), else the handler's. */
  async recorderOf(attempt: Pick<Attempt, "runId">): Promise<SessionRecorder> {
    return this.#byRun.get(attempt.runId) ?? this.#root();
  }

  /** A node's chain was recorded as `eventId`: a subgraph it invokes is caused by it. */
  nodeStarted(metadata: Record<string, unknown> | undefined, eventId: string): void {
    const ns = checkpointNsOf(metadata);
    if (ns !== "" && !this.#nodeEvents.has(ns)) this.#nodeEvents.set(ns, eventId);
  }

  /** A node's chain ended: what it invokes next is another task's. */
  nodeEnded(metadata: Record<string, unknown> | undefined, eventId: string): void {
    const ns = checkpointNsOf(metadata);
    if (this.#nodeEvents.get(ns) === eventId) this.#nodeEvents.delete(ns);
  }

  /**
   * An invocation of `threadId` ended, neither failed nor paused, and no other invocation of it
   * is in progress: LangGraph runs none of its tasks again, so the child runs of its subgraph
   * invocations named after a task (every one but a subgraph compiled with `checkpointer: true`,
   * which each invocation of the thread goes on in) are met no more. They are let go of, or a
   * long-lived handler would keep one per subgraph invocation; their runs stay open in the
   * ledger until the handler's run is closed, which finds them in the session.
   */
  invocationSettled(threadId: string | undefined): void {
    for (const [key, opened] of [...this.#children]) {
      const [thread, scope] = JSON.parse(key) as [string | null, string];
      if (thread !== (threadId ?? null) || !hasTaskId(scope)) continue;
      this.#children.delete(key);
      this.#released = true;
      opened.then(
        (child) => {
          if (this.#byRun.get(child.runId) === child) this.#byRun.delete(child.runId);
        },
        () => undefined,
      );
    }
  }

  /**
   * What closing the run closes too: the child runs open in this process (`open`), and whether
   * it let go of some still open (`released`), which only the session then names.
   */
  async opened(): Promise<{ open: SessionRecorder[]; released: boolean }> {
    return { open: await Promise.all(this.#children.values()), released: this.#released };
  }

  #isFlat(root: SessionRecorder, threadId: string): boolean {
    let flat = this.#flat.get(threadId);
    if (flat === undefined) {
      flat = recordedFlat(root.replay, threadId);
      this.#flat.set(threadId, flat);
    }
    return flat;
  }

  #child(root: SessionRecorder, scope: string, threadId: string | undefined) {
    const key = JSON.stringify([threadId ?? null, scope]);
    let child = this.#children.get(key);
    if (!child) {
      child = this.#open(root, scope, threadId);
      const opening = child;
      opening.catch(() => {
        if (this.#children.get(key) === opening) this.#children.delete(key);
      });
      this.#children.set(key, opening);
    }
    return child;
  }

  async #open(
    root: SessionRecorder,
    scope: string,
    threadId: string | undefined,
  ): Promise<SessionRecorder> {
    const parentScope = parentOf(scope);
    const parent = parentScope === "" ? root : await this.#child(root, parentScope, threadId);
    const node = nodeOf(scope);
    const cause = this.#nodeEvents.get(nodeTaskOf(scope));
    const child = parent.child({
      runId: subgraphRunId(root.runId, threadId, scope),
      actor: { type: "agent", id: node, framework: "langchain" },
      ...(cause !== undefined ? { causedByEventId: cause } : {}),
    });
    const subgraph: JsonObject = {
      node,
      checkpointNs: scope,
      ...(threadId !== undefined ? threadIdFields(threadId) : {}),
    };
    // On a run recorded before, the recorded run.started (the child loads its run first).
    await child.startRun({ framework: "langchain", [SUBGRAPH_FIELD]: subgraph });
    this.#byRun.set(child.runId, child);
    this.#opened(child);
    return child;
  }
}

/**
 * Closes, as `close` closes the handler's run (`root`), the child runs of its subgraphs still
 * open: those `opened` in this process, and those a process before it opened (a crash) or this
 * one let go of (`released`), found under the run in the session and known by their
 * `run.started` (SUBGRAPH_FIELD). Deepest
 * first, each after its model calls left in flight by a crash are abandoned, as the run's are.
 * Those of a process before are resumed as `root` records (`resumeOtherRun`: its redaction,
 * metadata and compaction, whether the handler opened it or was given it): what closing writes
 * there (the output, the error) is the caller's, as it is on the handler's run.
 */
export async function closeSubgraphRuns(
  root: SessionRecorder,
  opened: { open: readonly SessionRecorder[]; released: boolean },
  close: (recorder: SessionRecorder) => Promise<LedgerEvent>,
): Promise<void> {
  // A run this process started (not resumed) has no child run another process left open: the
  // session's runs are read only when one could be there.
  if (!root.resumed && opened.open.length === 0 && !opened.released) return;
  const { store, sessionId } = root;
  const below = await runsBelow(store, sessionId, root.runId);
  const recorders = new Map(opened.open.map((recorder) => [recorder.runId, recorder]));
  for (const run of below.reverse()) {
    if (run.status !== "running") continue;
    let recorder = recorders.get(run.runId);
    if (recorder === undefined) {
      const { events } = await store.readRun({ sessionId, runId: run.runId, limit: 1 });
      const started = events[0];
      if (!isRecord(started?.payload) || !isRecord(started.payload[SUBGRAPH_FIELD])) continue;
      const actor = started.actor ?? { type: "agent", id: "subgraph", framework: "langchain" };
      recorder = await root.resumeOtherRun({ runId: run.runId, actor });
    }
    if (recorder.status !== "running") continue;
    await abandonModelCallsLeftByCrash(recorder);
    await close(recorder);
  }
}
