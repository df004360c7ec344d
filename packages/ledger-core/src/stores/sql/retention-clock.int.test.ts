import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";

// The retention grace period is measured on one clock, the database's: a writer on a host
// whose clock is a minute behind re-puts a blob, and a deleteSession in this process between
// that put and the writer's append must keep it, as it keeps one put by a writer on time.

const putterScript = fileURLToPath(
  new URL("../../../dist/stores/sql/testing/skewed-putter.js", import.meta.url),
);

const graceMs = 1000;

async function checkSkewedWriter(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  try {
    const content = `evidence a late writer names ${uuidv7()}`;
    const ref = await store.putBlob(content);
    await store.append({
      sessionId: "victim",
      runId: "r",
      expectedSeq: 0,
      events: [
        { type: "run.started", evidenceRefs: [ref] },
        { type: "run.completed", payload: {} },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, graceMs + 200));

    const child = spawn(
      process.execPath,
      [putterScript, JSON.stringify({ target, sessionId: "writer", content, skewMs: -60_000 })],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("put\n")) resolve();
      });
      child.on("close", () => reject(new Error(`the writer exited early: ${stderr}`)));
    });
    // The writer has put the blob again and is about to append the event naming it.
    expect(await store.deleteSession("victim", { blobGraceMs: graceMs })).toMatchObject({
      deletedBlobs: 0,
      keptBlobs: 1,
    });
    child.stdin.write("go\n");
    expect(await exited, stderr).toBe(0);
    expect(new TextDecoder().decode(await store.getBlob(ref))).toBe(content);
  } finally {
    await store.close();
  }
}

await acrossStores(
  {
    topic: "retention grace on the database's clock",
    test: "keeps a blob re-put by a writer whose clock is behind",
    label: "clock",
  },
  checkSkewedWriter,
);
