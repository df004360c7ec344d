// Child process of the race test: appends `count` events, one per append, to a run of a
// session, re-reading the head and retrying on conflict. Waits for "go" on stdin so that all
// writers start together. Every fifth append it also sends two batches the store must refuse
// whole (refused-batches.ts). Prints one JSON line: { appended, conflicts, refused }.
// Usage: node race-writer.js <url> <keyPrefix> <sessionId> <runId> <writer> <count>
import { createInterface } from "node:readline";
import { LedgerError } from "../../../events/errors.js";
import { sendRefusedBatches } from "../../../testing/refused-batches.js";
import { RedisEventStore } from "../redis-store.js";
import { clusterFromUrl } from "./local-cluster.js";

const [url, keyPrefix, sessionId, runId, writer, countText] = process.argv.slice(2);
if (!url || !keyPrefix || !sessionId || !runId || !writer || !countText) {
  throw new Error("usage: race-writer <url> <keyPrefix> <sessionId> <runId> <writer> <count>");
}
const count = Number(countText);
// A local test cluster comes as redis-cluster://host:port,... (see local-cluster.ts).
const cluster = url.startsWith("redis-cluster://") ? clusterFromUrl(url) : undefined;
const store = cluster
  ? new RedisEventStore({ client: cluster, keyPrefix })
  : new RedisEventStore({ url, keyPrefix });
await store.init();
process.stdout.write("ready\n");
await new Promise<void>((resolve) => {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line === "go") {
      lines.close();
      process.stdin.destroy();
      resolve();
    }
  });
});

let conflicts = 0;
let refused = 0;
for (let index = 0; index < count; index++) {
  // Now and then, batches the store must refuse whole, racing the other writers' commits.
  if (index % 5 === 4)
    refused += await sendRefusedBatches(store, {
      sessionId,
      runId,
      tag: `${writer}-${index}`,
      committedId: `${writer}-0`,
    });
  const event = {
    eventId: `${writer}-${index}`,
    type: "input.received" as const,
    payload: { writer, index },
  };
  for (;;) {
    const head = await store.runHead({ sessionId, runId });
    try {
      await store.append({ sessionId, runId, expectedSeq: head.length, events: [event] });
      break;
    } catch (error) {
      if (!LedgerError.isInstance(error, "conflict")) throw error;
      conflicts++;
    }
  }
}
await store.close();
cluster?.disconnect();
process.stdout.write(`${JSON.stringify({ appended: count, conflicts, refused })}\n`);
