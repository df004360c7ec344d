// A run built in phases, each ended where an agent framework runs part of it again (a pause, a
// failure, a call left in flight), with what other writers append in between: what reopen.test.ts
// reopens after each phase and compares with a fresh `SessionRecorder.resume`.
import type { Actor } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

export const actor: Actor = { type: "agent", id: "planner" };
export const address = { sessionId: "reopen", runId: "run-1" };
const person: Actor = { type: "human", id: "ops" };

/** Long enough to go to a blob of its own (§8); `n` makes each one different. */
const long = (n: number) =>
  `turn ${n}: ${"the quick brown fox jumps over the lazy dog ".repeat(40)}`;

/** The model request of turn `turn`: the conversation so far, which grows every turn. */
export function request(turn: number) {
  const messages: unknown[] = [{ role: "system", content: long(0) }];
  for (let index = 1; index <= turn; index++)
    messages.push(
      { role: "user", content: `question ${index}`, extra: { $ledger: "a key of the user's" } },
      { role: "assistant", content: long(index) },
    );
  return { model: "m", messages };
}

/** The tool call `id` (its name is the id's prefix). */
const tool = (id: string, idempotent = false) => ({
  toolCallId: id,
  name: id.split("-")[0] as string,
  args: { id, note: long(99) },
  effect: { kind: "write" as const, idempotent },
});

/**
 * The model call of turn `number`, completed, or answered from the ledger; a failure the ledger
 * answers is retried, as the agent retried it when it was recorded.
 */
async function turn(recorder: SessionRecorder, number: number): Promise<void> {
  let call = await recorder.beforeModelCall({ request: request(number) });
  while (call.replayed?.status === "failed") call = await recorder.retry(call);
  if (!call.replayed) await recorder.modelCompleted(call, { text: long(number), turn: number });
}

/** Tool call `id` met again by a re-execution: answered from the ledger (failures retried). */
async function toolAgain(recorder: SessionRecorder, id: string): Promise<Attempt> {
  let call = await recorder.beforeToolCall(tool(id));
  while (call.replayed?.status === "failed") call = await recorder.retry(call);
  return call;
}

/** The unresolved attempt of tool call `toolCallId` in the ledger, as a person finds it. */
async function unresolved(store: EventStore, toolCallId: string) {
  const events = await readWholeRun(store, address);
  const requested = events.filter(
    (event) =>
      event.type === "tool.requested" &&
      (event.payload as { toolCallId?: string }).toolCallId === toolCallId,
  );
  const last = requested[requested.length - 1];
  if (!last?.attemptId || !last.stepId) throw new Error(`no request of ${toolCallId}`);
  return { stepId: last.stepId, attemptId: last.attemptId, requestedEventId: last.eventId };
}

/** Another writer of the run: a person deciding, or another process. */
async function otherWriter(store: EventStore, who: Actor = person) {
  return SessionRecorder.resume({ store, ...address, actor: who });
}

/**
 * The phases: each takes the recorder the run goes on with (a new one, then each phase's
 * reopened one) and returns when the agent stopped, LangGraph-style, with part of it to run
 * again. Each later phase re-executes the run from its start, as a framework resuming does.
 */
export const phases: ((recorder: SessionRecorder, store: EventStore) => Promise<void>)[] = [
  // A turn with a completed, a failed then retried, and an in-flight tool call, then a pause.
  async (recorder) => {
    await recorder.startRun({ task: "plan" });
    await recorder.recordInput({ task: "plan a trip" });
    await turn(recorder, 1);
    await recorder.toolCompleted(await recorder.beforeToolCall(tool("book-1")), "booked");
    const note = await recorder.beforeToolCall(tool("note-1", true));
    await recorder.toolFailed(note, new Error("disk full"));
    await recorder.toolCompleted(await recorder.retry(note), "noted");
    await recorder.beforeToolCall(tool("mail-1"));
    await recorder.checkpoint({ $ledger: "not a marker", paused: "mail-1" });
  },
  // Re-executed: answered up to the call in flight, which a person abandons; a failed model
  // call and its retry; a child run; another call left in flight, which a person approves.
  async (recorder, store) => {
    await recorder.recordInput({ task: "plan a trip" });
    await turn(recorder, 1);
    for (const id of ["book-1", "note-1"]) await toolAgain(recorder, id);
    const mail = await recorder
      .beforeToolCall(tool("mail-1"))
      .catch((error: { attempt: Attempt }) => error.attempt);
    const failed = await recorder.beforeModelCall({ request: request(2) });
    await recorder.modelFailed(failed, new Error("overloaded"), { partial: { text: long(7) } });
    await recorder.modelCompleted(await recorder.retry(failed), { text: long(2), turn: 2 });
    const helper = recorder.child({ actor: { type: "agent", id: "helper" } });
    await helper.startRun({ task: "prices" });
    await turn(helper, 1);
    await helper.completeRun("cheap");
    await recorder.beforeToolCall(tool("wire-1"));
    const ops = await otherWriter(store);
    await ops.abandon(mail, "checked the outbox: sent");
    await ops.approve(await unresolved(store, "wire-1"), "checked the bank: not sent");
  },
  // Re-executed: the approved call runs again; a new turn; a call left in flight.
  async (recorder) => {
    await recorder.recordInput({ task: "plan a trip" });
    await turn(recorder, 1);
    for (const id of ["book-1", "note-1", "mail-1"]) await toolAgain(recorder, id);
    await turn(recorder, 2);
    const helper = recorder.child({ actor: { type: "agent", id: "helper" } });
    await turn(helper, 1);
    await recorder.toolCompleted(await toolAgain(recorder, "wire-1"), "wired");
    await turn(recorder, 3);
    await recorder.beforeToolCall(tool("pay-1"));
  },
  // This process goes on past its frontier; then another process takes the run on, with a model
  // call of its own (whose message list the next turn extends) and an event of its own; and a
  // person abandons the call left in flight (a run holding one is not completed).
  async (recorder, store) => {
    recorder.replay?.skipAll();
    await turn(recorder, 4);
    const other = await otherWriter(store, { type: "agent", id: "planner-2" });
    other.replay?.skipAll();
    await turn(other, 5);
    await other.record({ type: "x.note", payload: { by: "planner-2" } });
    const ops = await otherWriter(store);
    await ops.abandon(await unresolved(store, "pay-1"), "checked the bank: not paid");
  },
  // This process takes the run back, and ends it.
  async (recorder) => {
    recorder.replay?.skipAll();
    await turn(recorder, 6);
    await recorder.completeRun({ plan: "done" });
  },
];
