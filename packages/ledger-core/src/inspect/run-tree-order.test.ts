import { describe, expect, it } from "vitest";
import { runsInTreeOrder } from "./run-tree-order.js";

interface Node {
  name: string;
  children: Node[];
}

const node = (name: string, ...children: Node[]): Node => ({ name, children });

describe("runsInTreeOrder", () => {
  it("lists each run before its children, a subtree whole before the next sibling, with its parent", () => {
    const tree = [node("a", node("a1", node("a11")), node("a2")), node("b", node("b1"))];
    expect(
      runsInTreeOrder(tree).map(({ run, parent }) => `${parent?.name ?? "-"}>${run.name}`),
    ).toEqual(["->a", "a>a1", "a1>a11", "a>a2", "->b", "b>b1"]);
    expect(runsInTreeOrder([])).toEqual([]);
  });

  it("walks a chain deeper than any call stack", () => {
    const root = node("0");
    let last = root;
    for (let index = 1; index < 200_000; index++) {
      const next = node(String(index));
      last.children.push(next);
      last = next;
    }
    const order = runsInTreeOrder([root]);
    expect(order).toHaveLength(200_000);
    expect(order.at(-1)).toEqual({ run: last, parent: order.at(-2)?.run });
  });
});
