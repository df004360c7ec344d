import { join } from "node:path";
import { MemoryEventStore, readWholeRun } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CHECKPOINT_SESSION, LedgerCheckpointSaver } from "./checkpoint-saver.js";

const scratch = scratchDirectory("lc-checkpoint-saver-", { beforeAll, afterAll });

function pipeline(saver: LedgerCheckpointSaver) {
  const State = Annotation.Root({ value: Annotation<string>() });
  return new StateGraph(State)
    .addNode("a", (state) => ({ value: `${state.value}>a` }))
    .addNode("b", (state) => ({ value: `${state.value}>b` }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", END)
    .compile({ checkpointer: saver });
}

/** A memory store that notes which runs are read from their first event (a fresh load). */
class ReadCountingStore extends MemoryEventStore {
  readonly loads: string[] = [];

  override async readRun(request: Parameters<MemoryEventStore["readRun"]>[0]) {
    if (!request.fromSeq) this.loads.push(request.runId);
    return super.readRun(request);
  }
}

async function tuples(saver: LedgerCheckpointSaver, threadId: string): Promise<CheckpointTuple[]> {
  const all: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: threadId } })) all.push(tuple);
  return all;
}

describe("LedgerCheckpointSaver", () => {
  it("keeps only `cachedThreads` threads in memory; an evicted thread reads and writes as before", async () => {
    const store = new ReadCountingStore();
    const saver = new LedgerCheckpointSaver({ store, cachedThreads: 2 });
    const graph = pipeline(saver);
    for (const threadId of ["t0", "t1", "t2", "t3"])
      await graph.invoke({ value: threadId }, { configurable: { thread_id: threadId } });
    const expected = await tuples(new LedgerCheckpointSaver({ store }), "t0");

    // t0 was evicted: it is loaded from its first event again, as a new process would.
    store.loads.length = 0;
    expect(await tuples(saver, "t0")).toEqual(expected);
    expect(store.loads).toEqual(["thread:t0"]);
    // t3 (recently used) was not.
    store.loads.length = 0;
    await saver.getTuple({ configurable: { thread_id: "t3" } });
    expect(store.loads).toEqual([]);

    // Another saver writes t1 while this one has evicted it: this one sees that and appends after.
    await pipeline(new LedgerCheckpointSaver({ store })).invoke(
      { value: "other" },
      { configurable: { thread_id: "t1" } },
    );
    await graph.invoke({ value: "again" }, { configurable: { thread_id: "t1" } });
    const t1 = await tuples(saver, "t1");
    expect(t1).toHaveLength(12);
    expect(t1[0]?.checkpoint.channel_values.value).toBe("again>a>b");
    expect(await tuples(new LedgerCheckpointSaver({ store }), "t1")).toEqual(t1);

    // deleteThread on an evicted thread, and it drops the log of a cached one.
    await saver.deleteThread("t2");
    await saver.deleteThread("t3");
    store.loads.length = 0;
    expect(await saver.getTuple({ configurable: { thread_id: "t3" } })).toBeUndefined();
    expect(store.loads).toEqual(["thread:t3"]);
    expect(
      await new LedgerCheckpointSaver({ store }).getTuple({ configurable: { thread_id: "t2" } }),
    ).toBeUndefined();
    await graph.invoke({ value: "new" }, { configurable: { thread_id: "t2" } });
    expect((await graph.getState({ configurable: { thread_id: "t2" } })).values.value).toBe(
      "new>a>b",
    );
  });

  it("saves a thread_id with a lone surrogate and reads it back exactly", async () => {
    const store = new MemoryEventStore();
    const threadId = "a\uD800";
    await pipeline(new LedgerCheckpointSaver({ store })).invoke(
      { value: "x" },
      { configurable: { thread_id: threadId } },
    );
    const fresh = new LedgerCheckpointSaver({ store });
    const state = await pipeline(fresh).getState({ configurable: { thread_id: threadId } });
    expect(state.values.value).toBe("x>a>b");
    expect(state.config.configurable?.thread_id).toBe(threadId);
    const listed = new Set<unknown>();
    for await (const tuple of fresh.list({})) listed.add(tuple.config.configurable?.thread_id);
    expect([...listed]).toEqual([threadId]);
    // UTF-8 would make both ids `a\uFFFD`: they must stay two threads.
    expect(await fresh.getTuple({ configurable: { thread_id: "a\uDBFF" } })).toBeUndefined();
    await fresh.deleteThread(threadId);
    expect(await fresh.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
  });

  it("lists across threads newest first, as the SQL savers do, so `limit` keeps the latest checkpoints", async () => {
    const store = new MemoryEventStore();
    const saver = new LedgerCheckpointSaver({ store });
    const graph = pipeline(saver);
    // Interleaved: the second thread runs between two runs of the first.
    await graph.invoke({ value: "1" }, { configurable: { thread_id: "first" } });
    await graph.invoke({ value: "2" }, { configurable: { thread_id: "second" } });
    await graph.invoke({ value: "3" }, { configurable: { thread_id: "first" } });
    const all: CheckpointTuple[] = [];
    for await (const tuple of saver.list({})) all.push(tuple);
    const ids = all.map((tuple) => tuple.config.configurable?.checkpoint_id as string);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(new Set(all.map((tuple) => tuple.config.configurable?.thread_id))).toEqual(
      new Set(["first", "second"]),
    );
    // The same list from a saver that keeps one thread in memory, reading the others again.
    const small: unknown[] = [];
    for await (const tuple of new LedgerCheckpointSaver({ store, cachedThreads: 1 }).list({}))
      small.push([tuple.config.configurable?.checkpoint_id, tuple.checkpoint.channel_values]);
    expect(small).toEqual(
      all.map((tuple) => [
        tuple.config.configurable?.checkpoint_id,
        tuple.checkpoint.channel_values,
      ]),
    );
    // The latest three: the first thread's second run (input, a, b), none of the second's.
    const latest: unknown[] = [];
    for await (const tuple of saver.list({}, { limit: 3 }))
      latest.push([tuple.config.configurable?.thread_id, tuple.checkpoint.channel_values.value]);
    expect(latest).toEqual([
      ["first", "3>a>b"],
      ["first", "3>a"],
      ["first", "3"],
    ]);
  });

  it("list filters metadata as SqliteSaver does: values compared as JSON, undefined ignored", async () => {
    const saver = new LedgerCheckpointSaver({ store: new MemoryEventStore() });
    await pipeline(saver).invoke({ value: "x" }, { configurable: { thread_id: "f" } });
    const count = async (filter: Record<string, unknown>) => {
      let n = 0;
      for await (const _ of saver.list({ configurable: { thread_id: "f" } }, { filter })) n++;
      return n;
    };
    expect(await count({ parents: {} })).toBe(4);
    expect(await count({ source: "loop", step: undefined })).toBe(3);
    expect(await count({ source: "loop", step: 1 })).toBe(1);
    expect(await count({ parents: { other: "x" } })).toBe(0);
  });

  it("a fork from an earlier checkpoint (time travel) leaves the original branch's checkpoints as they were", async () => {
    const store = new MemoryEventStore();
    const graph = pipeline(new LedgerCheckpointSaver({ store }));
    const config = { configurable: { thread_id: "fork" } };
    await graph.invoke({ value: "start" }, config);
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const [latest] = history;
    const afterA = history.find((snapshot) => snapshot.next[0] === "b");
    if (!latest || !afterA) throw new Error("expected the checkpoints of both nodes");
    expect(latest.values.value).toBe("start>a>b");

    // Edit the state after `a` and run `b` again from there: a second branch of the thread.
    const forked = await graph.invoke(
      null,
      await graph.updateState(afterA.config, { value: "edited" }),
    );
    expect(forked.value).toBe("edited>b");

    // The fork's channel versions repeat the original branch's numbers, with other values.
    const fresh = pipeline(new LedgerCheckpointSaver({ store }));
    expect((await fresh.getState(latest.config)).values.value).toBe("start>a>b");
    expect((await fresh.getState(afterA.config)).values.value).toBe("start>a");
    expect((await fresh.getState(config)).values.value).toBe("edited>b");
  });

  it("a state over the blob threshold is stored by reference, and a new process resumes the thread from it", async () => {
    const path = join(scratch, "large-state.db");
    const large = `start ${"a long document. ".repeat(1500)}`;
    const config = { configurable: { thread_id: "large" } };
    let failures = 1;
    const State = Annotation.Root({ value: Annotation<string>() });
    const graph = (saver: LedgerCheckpointSaver) =>
      new StateGraph(State)
        .addNode("a", (state) => ({ value: `${state.value}>a` }))
        .addNode("b", (state) => {
          if (failures-- > 0) throw new Error("the process dies in b");
          return { value: `${state.value}>b` };
        })
        .addEdge(START, "a")
        .addEdge("a", "b")
        .addEdge("b", END)
        .compile({ checkpointer: saver });

    const first = new SqliteEventStore({ path });
    await first.init();
    await expect(
      graph(new LedgerCheckpointSaver({ store: first })).invoke({ value: large }, config),
    ).rejects.toThrow("the process dies in b");
    const stored = await readWholeRun(first, {
      sessionId: DEFAULT_CHECKPOINT_SESSION,
      runId: "thread:large",
    });
    // Each write and each checkpoint holding the state names its blob instead of the ~35 KB.
    const holding = stored.filter((event) => (event.evidenceRefs ?? []).length > 0);
    expect(holding.map((event) => event.type)).toEqual(
      expect.arrayContaining(["checkpoint.saved", "x.langgraph.writes"]),
    );
    for (const event of stored) expect(JSON.stringify(event.payload).length).toBeLessThan(4000);
    await first.close();

    // A new process: its saver resolves the references; the thread goes on from `a`.
    const second = new SqliteEventStore({ path });
    await second.init();
    const saver = new LedgerCheckpointSaver({ store: second });
    const resumed = await graph(saver).invoke(null, config);
    expect(resumed.value).toBe(`${large}>a>b`);
    const history = await tuples(new LedgerCheckpointSaver({ store: second }), "large");
    expect(history[0]?.checkpoint.channel_values.value).toBe(`${large}>a>b`);
    expect(history.at(-2)?.checkpoint.channel_values.value).toBe(large);
    await second.close();
  });
});
