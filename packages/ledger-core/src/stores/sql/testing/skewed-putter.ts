// A child process of the retention clock test (run with `node` from dist): a writer on a host
// whose clock is `skewMs` off. It puts one blob, prints "put", waits for "go" on stdin, then
// appends a closed run of its own session naming the blob (as the recorder puts right before
// it appends) and prints "done".
import { createInterface } from "node:readline";
import { openRacerStore, type RacerTarget } from "./racer-store.js";

interface SkewedPutterArguments {
  target: RacerTarget;
  sessionId: string;
  content: string;
  skewMs: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as SkewedPutterArguments;
const hostNow = Date.now;
Date.now = () => hostNow() + options.skewMs;
const store = await openRacerStore(options.target);
await store.init();
const ref = await store.putBlob(options.content);
process.stdout.write("put\n");
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
await store.append({
  sessionId: options.sessionId,
  runId: "r",
  expectedSeq: 0,
  events: [
    { type: "run.started", evidenceRefs: [ref] },
    { type: "run.completed", payload: {} },
  ],
});
await store.close();
process.stdout.write("done\n");
