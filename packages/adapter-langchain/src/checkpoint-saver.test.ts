import { MemoryEventStore } from "@agent-ledger/core";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";

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

describe("LedgerCheckpointSaver", () => {
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
});
