import { describe, expect, it } from "vitest";
import { READ_RETRY_DELAYS_MS, retryRead } from "./read-retry.js";

/** A failure a store says is a lost connection, or not. */
class Failure extends Error {
  constructor(readonly lost: boolean) {
    super(lost ? "connection lost" : "refused");
  }
}

/** A read that fails with `failures` in turn, then answers the attempt (from 1) that succeeded. */
function failing(failures: Failure[]) {
  let sent = 0;
  const read = async () => {
    sent++;
    const next = failures[sent - 1];
    if (next !== undefined) throw next;
    return sent;
  };
  return { read, sent: () => sent };
}

const lostConnection = (error: unknown) => (error as Failure).lost;
const open = () => false;

describe("retryRead", () => {
  it("sends a read again after a lost connection, and answers what it read then", async () => {
    const { read, sent } = failing([new Failure(true), new Failure(true)]);
    expect(await retryRead({ read, lostConnection, closing: open })).toBe(3);
    expect(sent()).toBe(3);
  });

  it("sends it a bounded number of times, and fails with the last lost connection", async () => {
    const failures = Array.from({ length: 9 }, () => new Failure(true));
    const { read, sent } = failing(failures);
    await expect(retryRead({ read, lostConnection, closing: open })).rejects.toBe(
      failures[READ_RETRY_DELAYS_MS.length],
    );
    expect(sent()).toBe(READ_RETRY_DELAYS_MS.length + 1);
  });

  it("never sends again after any other failure (a refused statement, a timeout)", async () => {
    const refused = new Failure(false);
    const { read, sent } = failing([refused]);
    await expect(retryRead({ read, lostConnection, closing: open })).rejects.toBe(refused);
    expect(sent()).toBe(1);
  });

  it("stops at the failure it has once close() was called, before or during its wait", async () => {
    const lost = new Failure(true);
    const closed = failing([lost]);
    await expect(
      retryRead({ read: closed.read, lostConnection, closing: () => true }),
    ).rejects.toBe(lost);
    expect(closed.sent()).toBe(1);
    // close() called while the read waits to be sent again.
    let closing = false;
    const waiting = failing([lost]);
    const result = retryRead({ read: waiting.read, lostConnection, closing: () => closing });
    closing = true;
    await expect(result).rejects.toBe(lost);
    expect(waiting.sent()).toBe(1);
  });
});
