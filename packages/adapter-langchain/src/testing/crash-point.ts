import type { EventStore, NewEvent } from "@agent-ledger/core";
import {
  HaltingStore,
  haltAfterAppend,
  haltHere,
  readReports,
  reportToParent,
} from "@agent-ledger/core/testing";

/**
 * What a crash child runs (crashing-agent.test.child.ts): an agent recording into `store` that
 * stops at its crash point, or, for a reference run, ends. `args` come from the test.
 */
export type CrashScenario = (store: EventStore, args: string[]) => Promise<unknown>;

/** The line a crash child prints where it stops; the test kills it (SIGKILL) on reading it. */
export const CRASH = "CRASH_POINT";

/**
 * The store a crash child records into: once the child stops (`crashHere`, `crashAfterCommit`),
 * none of its appends returns, so nothing else running in the process (a parallel tool call's
 * completion, LangGraph saving a finished task) reaches the ledger between the crash point and
 * the SIGKILL, however long the kill takes to land.
 */
export function crashableLedger(store: EventStore): EventStore {
  return new HaltingStore(store, CRASH).store;
}

/** Stops this process here, with the call that runs it in flight, until the test kills it. */
export function crashHere(): Promise<never> {
  return haltHere(CRASH);
}

/** `store`, on which this process stops once an event matching `when` has committed. */
export function crashAfterCommit(
  store: EventStore,
  when: (event: NewEvent) => boolean,
): EventStore {
  return haltAfterAppend(store, when, CRASH);
}

/**
 * Tells the test that the crash child had an effect on the world (sent a message, paid for a
 * model call), through core's reportToParent: a SIGKILL a moment later cannot lose it. The
 * test adds these to what its resumed run does.
 */
export function noteEffect(name: string): void {
  reportToParent({ effect: name });
}

/** How many times a crash child noted each effect, from what it printed. */
export class ChildEffects {
  readonly #counts = new Map<string, number>();

  constructor(stdout: string) {
    for (const report of readReports<{ effect?: string }>(stdout)) {
      const name = report.effect;
      if (name !== undefined) this.#counts.set(name, this.count(name) + 1);
    }
  }

  count(name: string): number {
    return this.#counts.get(name) ?? 0;
  }
}
