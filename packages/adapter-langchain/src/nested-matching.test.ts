import { join } from "node:path";
import { findLedgerError, type LedgerEvent } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import {
  FIRST,
  RUN,
  SECOND,
  SESSION,
  shop,
  shopAgent,
} from "./testing/nested-matching.test.data.js";

const scratch = scratchDirectory("langchain-nested-matching-", { beforeAll, afterAll });

function nameOf(event: LedgerEvent): unknown {
  return (event.payload as { name?: unknown } | undefined)?.name;
}

/** Each `charge` request with the step of the `checkout` request it was made inside. */
async function chargesByCheckoutStep(store: Parameters<typeof runEvents>[0]) {
  const events = await runEvents(store, SESSION, RUN);
  const requests = new Map(
    events
      .filter((event) => event.type === "tool.requested")
      .map((event) => [event.eventId, event]),
  );
  return events
    .filter((event) => event.type === "tool.requested" && nameOf(event) === "charge")
    .map((event) => {
      const outer = requests.get(String(event.causedByEventId));
      return { outer: outer && nameOf(outer), step: outer?.stepId };
    });
}

describe("a call made inside a tool is matched on resume only inside the same outer call", () => {
  it("two threads: each thread's checkout meets its own charge, not the other's", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "threads.db");
    // Thread A dies in checkout once charge completed; thread B (another process, the same run
    // and tool call id) dies in checkout before its charge.
    const first = await crashInChild("nested-matching:first-after-charge", path);
    expect(first.count(`charge:${FIRST}`)).toBe(1);
    const second = await crashInChild("nested-matching:second-before-charge", path);
    expect(second.count(`charge:${SECOND}`)).toBe(0);

    // One handler resumes B, then A.
    const store = await openLedger(path, onTestFinished);
    const resumed = shop();
    const { agent, handler } = shopAgent(store, resumed.tools);
    // B's charge never ran: it runs now (A's completed charge is no call of B's checkout).
    const b = await agent.invoke(null, threadConfig(handler, SECOND));
    expect(b.messages.at(-1)?.content).toBe(`${SECOND}: checked out ${SECOND} (charged 10)`);
    // A's charge completed before the crash: not run again. The handler cannot hand a call
    // made inside a tool its recorded answer, so A's checkout waits for a person.
    const error = await agent
      .invoke(null, threadConfig(handler, FIRST))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")?.details).toMatchObject({
      name: "checkout",
      toolCallId: "call_1",
      inner: { name: "charge", status: "completed" },
    });
    expect(resumed.charged).toEqual([SECOND]);
    // Resumed again (no decision yet), by a new handler: A's checkout is now a retry of the
    // attempt the last resume made, and its charge was recorded inside the first one: still the
    // same call, still not run again.
    const again = shopAgent(store, resumed.tools);
    const stillRefused = await again.agent
      .invoke(null, threadConfig(again.handler, FIRST))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(stillRefused, "unresolved-attempt")?.details).toMatchObject({
      name: "checkout",
      inner: { name: "charge", status: "completed" },
    });
    expect(resumed.charged).toEqual([SECOND]);
    // Each charge was made inside a checkout of its own step.
    const charges = await chargesByCheckoutStep(store);
    expect(charges.map((charge) => charge.outer)).toEqual(["checkout", "checkout"]);
    expect(new Set(charges.map((charge) => charge.step)).size).toBe(2);
  });

  it("one thread, two turns: the second turn's checkout does not meet the first turn's charge", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "turns.db");
    const crashed = await crashInChild("nested-matching:second-turn-before-charge", path);
    expect(crashed.count("charge:first")).toBe(1);
    expect(crashed.count("charge:second")).toBe(0);

    const store = await openLedger(path, onTestFinished);
    const resumed = shop();
    const { agent, handler } = shopAgent(store, resumed.tools);
    const result = await agent.invoke(null, threadConfig(handler, FIRST));
    expect(result.messages.at(-1)?.content).toBe("second: checked out second (charged 10)");
    expect(resumed.charged).toEqual(["second"]);
  });
});
