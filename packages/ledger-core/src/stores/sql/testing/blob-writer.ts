// A child process of the cross-process retention race (run with `node` from dist). As the
// recorder does, it puts the blobs an event names right before appending it, and puts again
// nothing it has seen committed: its first event names the blobs it shares with other
// sessions, every later one a blob of its own, `pauseMs` apart, on a run of its own session;
// then it closes the run. With `claim`, it puts them for its session (`putBlob`'s sessionId), as
// the recorder does. Prints one JSON line: { refs } (every ref a committed event names).
import { setTimeout as sleep } from "node:timers/promises";
import { openRacerStore, type RacerTarget } from "./racer-store.js";

interface BlobWriterArguments {
  target: RacerTarget;
  sessionId: string;
  shared: string[];
  turns: number;
  pauseMs: number;
  claim?: boolean;
}

const options = JSON.parse(process.argv[2] ?? "{}") as BlobWriterArguments;
const store = await openRacerStore(options.target);
await store.init();
const address = { sessionId: options.sessionId, runId: "writer" };
await store.append({ ...address, expectedSeq: 0, events: [{ type: "run.started" }] });
const refs: string[] = [];
for (let turn = 0; turn < options.turns; turn++) {
  const contents = turn === 0 ? options.shared : [`${options.sessionId} turn ${turn}`];
  const put = options.claim ? { sessionId: options.sessionId } : undefined;
  const named = store.putBlobs
    ? await store.putBlobs(contents, put)
    : await Promise.all(contents.map((content) => store.putBlob(content, put)));
  await store.append({
    ...address,
    expectedSeq: turn + 1,
    events: [{ type: "x.turn", payload: { turn }, evidenceRefs: named }],
  });
  refs.push(...named);
  await sleep(options.pauseMs);
}
await store.append({
  ...address,
  expectedSeq: options.turns + 1,
  events: [{ type: "run.completed", payload: {} }],
});
await store.close();
process.stdout.write(`${JSON.stringify({ refs })}\n`);
