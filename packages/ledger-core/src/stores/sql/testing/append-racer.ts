// A child process of the cross-process race tests (run with `node` from dist). It calls init()
// (so several children race on it), then appends `count` events one at a time with optimistic
// concurrency: read the head, append at its length, on `conflict` read again and retry.
// Prints one JSON line: { appended, conflicts }.
import { LedgerError } from "../../../events/errors.js";
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
for (let index = 0; index < options.count; index++) {
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
process.stdout.write(`${JSON.stringify({ appended: options.count, conflicts })}\n`);
