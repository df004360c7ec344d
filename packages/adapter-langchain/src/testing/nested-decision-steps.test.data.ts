import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import type { TestContext } from "vitest";
import { crashInChild, openLedger } from "./crashing-agent.test.data.js";
import { payloadOf, runEvents } from "./helpers.js";
import { type ChargePath, type CrashAt, RUN, SESSION } from "./nested-decision.test.data.js";

/**
 * `crashed(name, scenario, crashAt, onTestFinished, ...args)`: a child runs the agent (or the
 * plain graph) and is SIGKILLed where `crashAt` says; its ledger and charges log are in `scratch`.
 */
export function crashedIn(scratch: string) {
  return async (
    name: string,
    scenario: "agent" | "graph",
    crashAt: CrashAt,
    onTestFinished: TestContext["onTestFinished"],
    ...args: string[]
  ) => {
    const db = join(scratch, `${name}.db`);
    const charges = join(scratch, `${name}.charges.log`);
    await crashInChild(`nested-decision:${scenario}`, db, charges, crashAt, ...args);
    return { store: await openLedger(db, onTestFinished), charges };
  };
}

/** The tool events of the run, as `type name`, and the attempt of each tool's first call. */
export async function toolEvents(store: EventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const requested = events.filter((event) => event.type === "tool.requested");
  const nameOf = new Map(
    requested.map((event) => [event.attemptId, payloadOf<{ name: string }>(event).name]),
  );
  return {
    outcomes: events
      .filter((event) => event.type.startsWith("tool.") || event.type === "attempt.abandoned")
      .filter((event) => event.type !== "tool.requested")
      .map((event) => `${event.type} ${nameOf.get(event.attemptId)}`),
    first: (name: string) => requested.find((event) => nameOf.get(event.attemptId) === name),
  };
}

export function refusalIn(outcome: { answer: string } | { error: unknown }) {
  return "error" in outcome ? findLedgerError(outcome.error, "unresolved-attempt") : undefined;
}

export async function person(store: EventStore) {
  return SessionRecorder.resume({
    store,
    sessionId: SESSION,
    runId: RUN,
    actor: { type: "human", id: "ops" },
  });
}

/** The unresolved attempt with this id, as the README's recipe hands it to the person. */
export async function unresolvedAttempt(store: EventStore, attemptId: unknown) {
  const found = (await inspectSession(store, SESSION)).unresolved.find(
    (attempt) => attempt.attemptId === attemptId,
  );
  if (!found) throw new Error(`attempt ${String(attemptId)} is not unresolved`);
  return found;
}

/** The unresolved attempt of the tool `name` (the last one, if it was run again). */
export async function unresolvedNamed(store: EventStore, name: string) {
  const found = (await inspectSession(store, SESSION)).unresolved.findLast(
    (attempt) => attempt.name === name,
  );
  if (!found) throw new Error(`no call of ${name} is unresolved`);
  return found;
}

/** How checkout reaches the charge, as a test's name says it. */
export const between = {
  direct: "",
  deep: ", a tool between the two",
  "sub-agent": ", through a sub-agent",
  "callback-sub-agent": ", through a sub-agent without ledgerMiddleware",
  "stateless-sub-agent": ", through a sub-agent without a checkpointer",
  "callback-sub-agents":
    ", through a sub-agent whose tool runs a sub-agent, without ledgerMiddleware",
  "stateless-sub-agents":
    ", through a sub-agent whose tool runs a sub-agent, neither with a checkpointer",
} satisfies Record<ChargePath, string>;

/**
 * What checkout's receipt starts with: a sub-agent's model says what the charge gave it (on two
 * levels, the outer one what the inner one said).
 */
export function paid(path: ChargePath) {
  if (path === "direct" || path === "deep") return "";
  return path === "callback-sub-agents" || path === "stateless-sub-agents"
    ? "paid: paid: "
    : "paid: ";
}
