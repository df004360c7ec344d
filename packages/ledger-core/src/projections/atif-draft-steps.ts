import type { AtifObservationResult, AtifStep } from "./atif-types.js";

// A run's trajectory step as it is gathered, before the steps are put in order and numbered.

export interface DraftStep {
  /** commitCursor of the event the step is anchored at (orders the steps). */
  at: number;
  step: Omit<AtifStep, "step_id">;
  /** eventIds this step stands for (a child run caused by one is referenced from it). */
  causes: string[];
  /** tool.requested eventId -> the observation result of that call. */
  resultsByCause: Map<string, AtifObservationResult>;
}
