import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { openStore } from "../store/open-store.js";
import { firstDifference, shortJson } from "./first-difference.js";

describe("firstDifference", () => {
  it("names the first place two JSON values differ, depth first", () => {
    expect(firstDifference({ a: 1, b: [1, 2] }, { a: 1, b: [1, 2] })).toBeUndefined();
    expect(firstDifference({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] })).toEqual({
      path: "$.b[1]",
      recorded: 2,
      now: 3,
    });
    expect(firstDifference({ a: 1 }, { a: 1, "x-y": true })).toEqual({
      path: '$["x-y"]',
      recorded: undefined,
      now: true,
    });
    expect(firstDifference([1], [1, 2])).toEqual({ path: "$[1]", recorded: undefined, now: 2 });
    expect(firstDifference({ a: null }, { a: {} })).toEqual({
      path: "$.a",
      recorded: null,
      now: {},
    });
    expect(shortJson("x".repeat(200), 10)).toBe(`"xxxxxxxx…`);
    expect(shortJson(undefined)).toBe("(none)");
  });
});

describe("a re-executed run whose model request changed", () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0))
      rmSync(directory, { recursive: true, force: true });
  });

  it("is refused with replay-divergence naming where the request differs (a system prompt with the time)", async () => {
    const directory = mkdtempSync(join(tmpdir(), "first-difference-"));
    directories.push(directory);
    const url = `sqlite:${join(directory, "ledger.db")}`;
    const actor = { type: "agent" as const, id: "assistant" };
    const request = (now: string) => ({
      model: "m",
      messages: [
        { role: "system", content: `You are helpful. Now: ${now}` },
        { role: "user", content: "charge me" },
      ],
    });
    const store = await openStore(url);
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: request("10:00") });
    await recorder.modelCompleted(call, { text: "ok" });
    await store.close();

    const again = await openStore(url);
    const resumed = await SessionRecorder.resume({
      store: again,
      sessionId: "s",
      runId: "r",
      actor,
    });
    const length = (await again.runHead({ sessionId: "s", runId: "r" })).length;
    const refused = resumed.beforeModelCall({ request: request("10:05") });
    await expect(refused).rejects.toMatchObject({
      code: "replay-divergence",
      details: { seq: 1, path: "$.messages[0].content" },
    });
    await expect(refused).rejects.toThrow(
      'first difference at $.messages[0].content: recorded "You are helpful. Now: 10:00", now "You are helpful. Now: 10:05"',
    );
    // Nothing written.
    expect((await again.runHead({ sessionId: "s", runId: "r" })).length).toBe(length);
    await again.close();
  });
});
