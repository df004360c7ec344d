// A child process of the cross-process race tests (run with `node` from dist). It calls init()
// (so several children race on it), then appends `count` events one at a time with optimistic
// concurrency: read the head, append at its length, on `conflict` read again and retry.
// Every fifth append it also sends two batches the store must refuse whole (refused-batches.ts).
// Prints one JSON line: { appended, conflicts, refused }.
import { LedgerError } from "../../../events/errors.js";
import { sendRefusedBatches } from "../../../testing/refused-batches.js";
import { openRacerStore, type RacerTarget } from "./racer-store.js";

interface RacerArguments {
  target: RacerTarget;
  sessionId: string;
  runId: string;
  writer: number;
  count: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as RacerArguments;
const store = await openRacerStore(options.target);
await store.init();
let conflicts = 0;
let refused = 0;
for (let index = 0; index < options.count; index++) {
  // Now and then, batches the store must refuse whole, racing the other writers' commits.
  if (index % 5 === 4)
    refused += await sendRefusedBatches(store, {
      sessionId: options.sessionId,
      runId: options.runId,
      tag: `w${options.writer}-${index}`,
      committedId: `w${options.writer}-0`,
    });
  for (;;) {
    const head = await store.runHead({ sessionId: options.sessionId, runId: options.runId });
    try {
      await store.append({
        sessionId: options.sessionId,
        runId: options.runId,
        expectedSeq: head.length,
        events: [
          {
            eventId: `w${options.writer}-${index}`,
            type: "x.race",
            payload: { writer: options.writer, index },
          },
        ],
      });
      break;
    } catch (error) {
      if (!LedgerError.isInstance(error, "conflict")) throw error;
      conflicts++;
    }
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ appended: options.count, conflicts, refused })}\n`);
