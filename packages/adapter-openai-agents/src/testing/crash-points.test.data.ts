// What every crash scenario is, and the crash points they die at: the first event the child's
// store commits that matches a test.
import type { NewEvent } from "@agent-ledger/core";
import type { CrashingChild } from "./crashing-child.js";

export type Scenario = (child: CrashingChild) => Promise<unknown>;
export type EventTest = (event: NewEvent) => boolean;

export const isType =
  (type: string): EventTest =>
  (event) =>
    event.type === type;

// An event's payload fields (a payload that is not an object has none).
export function payloadOf(event: NewEvent): Record<string, unknown> {
  const payload = event.payload;
  return typeof payload === "object" && payload !== null
    ? (payload as Record<string, unknown>)
    : {};
}

/** True on the `count`th event that matches `when`. */
export function nth(count: number, when: EventTest): EventTest {
  let seen = 0;
  return (event) => when(event) && ++seen === count;
}
