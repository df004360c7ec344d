import { describe, expect, it } from "vitest";
import { ClosingGate } from "./closing-gate.js";

/** A promise the test settles by hand. */
function manual<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("ClosingGate", () => {
  it("closes the connection only once every operation under way has settled", async () => {
    const gate = new ClosingGate("TestStore");
    const first = manual<string>();
    const second = manual<string>();
    const answers = [
      gate.run("append", () => first.promise),
      gate.run("read", () => second.promise),
    ];
    const log: string[] = [];
    const closed = gate.close(async () => {
      log.push("connection closed");
    });
    expect(gate.closing).toBe(true);
    first.resolve("a");
    await tick();
    expect(log).toEqual([]);
    second.reject(new Error("lost"));
    await closed;
    expect(log).toEqual(["connection closed"]);
    await expect(answers[0]).resolves.toBe("a");
    await expect(answers[1]).rejects.toThrow("lost");
    // A second close() gets the same promise, and the connection is not closed again.
    expect(
      gate.close(async () => {
        log.push("again");
      }),
    ).toBe(closed);
    await closed;
    expect(log).toEqual(["connection closed"]);
  });

  it("closes at once with nothing under way, and refuses what starts after close()", async () => {
    const gate = new ClosingGate("TestStore");
    await expect(gate.run("append", async () => "done")).resolves.toBe("done");
    let closedConnection = false;
    await gate.close(async () => {
      closedConnection = true;
    });
    expect(closedConnection).toBe(true);
    let ran = false;
    await expect(
      gate.run("append", async () => {
        ran = true;
      }),
    ).rejects.toMatchObject({ code: "store-unavailable", nothingWritten: true });
    expect(ran).toBe(false);
  });

  it("counts an operation that throws before its promise as never under way", async () => {
    const gate = new ClosingGate("TestStore");
    await expect(
      gate.run("append", () => {
        throw new Error("bad input");
      }),
    ).rejects.toThrow("bad input");
    let closedConnection = false;
    await gate.close(async () => {
      closedConnection = true;
    });
    expect(closedConnection).toBe(true);
  });
});
