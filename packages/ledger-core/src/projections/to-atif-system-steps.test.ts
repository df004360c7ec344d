import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";

/** One model call per request, each answered "reply to <its last message>"; the steps. */
async function stepsOf(messagesOfEachCall: JsonValue[][]) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  for (const messages of messagesOfEachCall) {
    const call = await recorder.beforeModelCall({ request: { model: "m", messages } });
    const last = messages[messages.length - 1] as { content: string };
    await recorder.modelCompleted(call, { text: `reply to ${last.content}` });
  }
  return (await toAtif(store, "s")).steps.map((step) => [step.source, step.message]);
}

const system = (content: string) => ({ role: "system", content });
const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

describe("toAtif system steps", () => {
  it("shows the instructions of a later call when the run's first call had none", async () => {
    // A LangChain model streamed a bare prompt, then was invoked with a system message.
    expect(await stepsOf([[user("Hi")], [system("Be nice"), user("Again")]])).toEqual([
      ["user", "Hi"],
      ["agent", "reply to Hi"],
      ["system", "Be nice"],
      ["user", "Again"],
      ["agent", "reply to Again"],
    ]);
  });

  it("shows each system prompt once, where first given: a side call's own, and the main loop's not again", async () => {
    expect(
      await stepsOf([
        [system("Book flights."), user("book a flight")],
        [system("Classify the city."), user("classify: Paris")],
        [
          system("Book flights."),
          user("book a flight"),
          assistant("reply to book a flight"),
          user("Paris"),
        ],
      ]),
    ).toEqual([
      ["system", "Book flights."],
      ["user", "book a flight"],
      ["agent", "reply to book a flight"],
      ["system", "Classify the city."],
      ["user", "classify: Paris"],
      ["agent", "reply to classify: Paris"],
      ["user", "Paris"],
      ["agent", "reply to Paris"],
    ]);
  });
});
