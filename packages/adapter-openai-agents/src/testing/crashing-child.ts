import type { EventStore, NewEvent } from "@agent-ledger/core";
import { HaltingStore, readReports, reportToParent } from "@agent-ledger/core/testing";
import type { RunToolApprovalItem } from "@openai/agents";
import { approvalCallId } from "../approval-decisions.js";
import type { AnyRunState } from "../run-ends.js";
import type { AfterEffect } from "./fixture.js";
import type { ScriptedModel } from "./scripted-model.js";

/** The line a crash child prints where it dies; the parent SIGKILLs it on reading it. */
export const DIED = "DIED";

/** What a killed child did before it died, as it reported it. */
export interface KilledProcess {
  /** The side effects its tools performed, in order. */
  effects: string[];
  /** The input of each model call it made, a call in flight at the kill included. */
  modelInputs: unknown[];
  /** The approval interruptions its runs stopped at, in order. */
  interruptions: Interruption[];
  /** The RunStates it went on from after a person decided on them (`toString()`), in order. */
  decidedStates: string[];
}

/** An approval interruption as a killed child reports it. */
export interface Interruption {
  callId: string;
  name: string | undefined;
}

type Report =
  | { effect: string }
  | { modelInput: unknown }
  | { interruption: Interruption }
  | { decidedState: string };

// Core's reportToParent: synchronous, so what is written is out when SIGKILL comes.
const report = (line: Report): void => reportToParent(line);

/** What the child reported on `stdout` before it was killed. */
export function parseReports(stdout: string): KilledProcess {
  const killed: KilledProcess = {
    effects: [],
    modelInputs: [],
    interruptions: [],
    decidedStates: [],
  };
  for (const parsed of readReports<Report>(stdout)) {
    if ("effect" in parsed) killed.effects.push(parsed.effect);
    else if ("modelInput" in parsed) killed.modelInputs.push(parsed.modelInput);
    else if ("interruption" in parsed) killed.interruptions.push(parsed.interruption);
    else killed.decidedStates.push(parsed.decidedState);
  }
  return killed;
}

/**
 * A child process's side of a crash test: its ledger, the ways it can die (the parent kills it
 * when it prints DIED), and what it reports to the parent before that.
 */
export class CrashingChild {
  readonly #halting: HaltingStore;

  constructor(store: EventStore) {
    this.#halting = new HaltingStore(store, DIED);
  }

  /** The ledger; once the child is dying (`dieHere`), every append hangs. */
  get store(): EventStore {
    return this.#halting.store;
  }

  /**
   * Dies here, inside the call that calls it. Nothing more reaches the ledger: calls running
   * beside this one (parallel tool calls) cannot record anything while the parent kills it.
   */
  dieHere(): Promise<never> {
    return this.#halting.halt();
  }

  /** The ledger, dying right after an append holding an event that matches `when` committed. */
  dyingAfter(when: (event: NewEvent) => boolean): EventStore {
    return this.#halting.haltAfter(when).store;
  }

  /** Reports each side effect to the parent; dies right after the one named `dieAfter`. */
  afterEffect(dieAfter?: string): AfterEffect {
    return async (effect) => {
      report({ effect });
      if (effect === dieAfter) await this.dieHere();
    };
  }

  /** Reports each call of `model` (its input) to the parent; dies inside call `dieInCall` (0-based). */
  watch(model: ScriptedModel, options: { dieInCall?: number } = {}): void {
    model.beforeCall = async (index) => {
      // The request of this call is the last one (`index` counts from where the script went on).
      report({ modelInput: model.requests.at(-1)?.input });
      if (index === options.dieInCall) await this.dieHere();
    };
  }

  /** Reports the approval interruptions a run stopped at to the parent. */
  asked(interruptions: readonly RunToolApprovalItem[]): void {
    for (const item of interruptions)
      report({ interruption: { callId: approvalCallId(item), name: item.name } });
  }

  /** Reports a RunState a person decided on, which the child goes on from, to the parent. */
  decided(state: AnyRunState): void {
    report({ decidedState: state.toString() });
  }
}
