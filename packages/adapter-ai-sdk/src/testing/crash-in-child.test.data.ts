import type { EventStore, NewEvent } from "@agent-ledger/core";
import {
  compiledBeside,
  HaltingStore,
  haltAfterAppend,
  haltHere,
  killAtMarker,
  readReports,
  reportToParent,
} from "@agent-ledger/core/testing";
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import type { CrashScenarioName } from "./crash-scenarios.test.data.js";
import { partsStream, streamPartsOf } from "./scripted-model.test.data.js";

/** The line a scenario's child prints at its crash point; the test kills it there. */
const CRASH_POINT = "CRASH_POINT";

/** A line a child reports before it dies (core's reportToParent: a SIGKILL loses none). */
type Report = { effect: string } | { modelCall: true };

/** What a crashed child did before the SIGKILL: the tests add it to what the resume does. */
export interface CrashedChild {
  /** Side effects of its tools, in the order they happened. */
  effects: string[];
  /** Calls that reached the provider. */
  modelCalls: number;
}

/** The child's side of the report, for a scenario's tools and model. */
export const report = {
  effect(effect: string): void {
    reportToParent({ effect } satisfies Report);
  },
  modelCall(): void {
    reportToParent({ modelCall: true } satisfies Report);
  },
};

/** In the child: stop here, inside a tool or model call, until the test's SIGKILL. */
export const crashHere = (): Promise<never> => haltHere(CRASH_POINT);

/**
 * In the child: a model stream of `parts` up to their first part of type `last`, which stops
 * for good (the crash point) when it is read on after that part: the stream is still open at
 * the SIGKILL.
 */
export function streamCutAfter(
  parts: LanguageModelV3StreamPart[],
  last: LanguageModelV3StreamPart["type"],
): ReadableStream<LanguageModelV3StreamPart> {
  const kept = parts.slice(0, parts.findIndex((part) => part.type === last) + 1);
  let index = 0;
  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      async pull(controller) {
        const part = kept[index++];
        if (part === undefined) await crashHere();
        else controller.enqueue(part);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * In the child: the store a scenario records into. Once the child stops at its crash point no
 * append returns, so nothing else still running (a parallel tool call) reaches the ledger
 * between the crash point and the SIGKILL.
 */
export function crashableLedger(store: EventStore): EventStore {
  return new HaltingStore(store, CRASH_POINT).store;
}

/**
 * In the child: `store`, crashing (the crash point) right after an append holding an event
 * `when` matches has committed: a process killed between two writes of the ledger.
 */
export function crashAfterAppend(
  store: EventStore,
  when: (event: NewEvent) => boolean,
): EventStore {
  return haltAfterAppend(store, when, CRASH_POINT);
}

// The compiled child, beside this file's compiled copy (tests run after `tsc -b`, as the
// example's SIGKILL tests do).
const CHILD = compiledBeside("./crash-scenario.test.child.js", import.meta.url);

/**
 * Runs `scenario` in a child Node process recording into the SQLite file `path`, and kills it
 * with SIGKILL at its crash point. Rejects if the child ends any other way.
 */
export async function crashInChild(
  scenario: CrashScenarioName,
  path: string,
): Promise<CrashedChild> {
  const { stdout } = await killAtMarker([CHILD, scenario, path], CRASH_POINT);
  const reports = readReports<Report>(stdout);
  return {
    effects: reports.flatMap((line) => ("effect" in line ? [line.effect] : [])),
    modelCalls: reports.filter((line) => "modelCall" in line).length,
  };
}

/**
 * A model that answers each call with `answer(options)`, generated or streamed. With
 * `crashAfterToolCall` (in the crash child, which reports each provider call), the first stream
 * that asks for a tool call stops for good after its tool-call part (`streamCutAfter`).
 */
export function crashableModel(
  answer: (options: LanguageModelV3CallOptions) => LanguageModelV3GenerateResult,
  { crashAfterToolCall = false } = {},
): MockLanguageModelV3 {
  const stream = (parts: LanguageModelV3StreamPart[]) =>
    crashAfterToolCall && parts.some((part) => part.type === "tool-call")
      ? streamCutAfter(parts, "tool-call")
      : partsStream(parts);
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      if (crashAfterToolCall) report.modelCall();
      return answer(options);
    },
    doStream: async (options) => {
      if (crashAfterToolCall) report.modelCall();
      return { stream: stream(streamPartsOf(answer(options))) };
    },
  });
}
