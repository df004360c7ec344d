/** A run of a tree as `runsInTreeOrder` lists it, with the run it is a child of. */
export interface RunInTree<Run> {
  run: Run;
  /** Undefined for a root. */
  parent: Run | undefined;
}

/**
 * The runs of the trees under `roots` (a `SessionInspection`'s `runs`, or any tree of runs
 * with `children`) in tree order: each run before its children, the children in order, each
 * subtree whole before the next sibling, as `agent-ledger inspect` prints them. Read
 * backwards, every run comes after all the runs under it (to sum up a subtree). Walked with a
 * stack of its own: a chain of child runs (handoff after handoff) of any depth fits, where a
 * recursive walk overflows the call stack at a few thousand.
 */
export function runsInTreeOrder<Run extends { children: readonly Run[] }>(
  roots: readonly Run[],
): RunInTree<Run>[] {
  const order: RunInTree<Run>[] = [];
  const pending: RunInTree<Run>[] = [];
  for (let index = roots.length - 1; index >= 0; index--)
    pending.push({ run: roots[index] as Run, parent: undefined });
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    order.push(entry);
    const { run } = entry;
    // One push per child: spread, 160,000 child runs overflowed the stack.
    for (let index = run.children.length - 1; index >= 0; index--)
      pending.push({ run: run.children[index] as Run, parent: run });
  }
  return order;
}
