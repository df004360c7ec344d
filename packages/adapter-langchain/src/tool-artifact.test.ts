import { join } from "node:path";
import { MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { payloadOf, runEvents } from "./testing/helpers.js";
import { artifactAgent, RUN, SESSION } from "./testing/tool-artifact.test.data.js";

const scratch = scratchDirectory("langchain-artifact-", { beforeAll, afterAll });

/** The artifact of the run's ToolMessage, as JSON text (what a caller can compare). */
function artifactOf(messages: BaseMessage[]): string {
  const result = messages.find((message) => ToolMessage.isInstance(message));
  return JSON.stringify((result as ToolMessage | undefined)?.artifact);
}

describe("a tool's artifact answered from the ledger", () => {
  it("is the artifact the tool returned live, Dates and Maps included", async ({
    onTestFinished,
  }) => {
    const live = artifactOf((await artifactAgent(new MemoryEventStore()).start()).messages);
    expect(JSON.parse(live)).toEqual({
      rows: [1, 2, 3],
      when: "1970-01-01T00:00:00.000Z",
      totals: {},
    });

    const path = join(scratch, "after-query.db");
    await crashInChild("tool-artifact:after-query", path);
    const store = await openLedger(path, onTestFinished);
    const stored = (await runEvents(store, SESSION, RUN)).find(
      (event) => event.type === "tool.completed",
    );
    // A Map is kept as toJsonValue keeps one: its entries as an object.
    const kept = { rows: [1, 2, 3], when: "1970-01-01T00:00:00.000Z", totals: { eur: 12 } };
    expect(
      payloadOf<{ result: { data: { artifact: unknown } } }>(stored).result.data.artifact,
    ).toEqual(kept);

    const replayed = artifactOf((await artifactAgent(store).resume()).messages);
    expect(JSON.parse(replayed)).toEqual({ ...JSON.parse(live), totals: { eur: 12 } });
  });
});
