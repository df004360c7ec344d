import { describe, expect, it } from "vitest";
import { MatchedPositions } from "./matched-positions.js";

describe("MatchedPositions", () => {
  it("counts each position once, taken in order, ahead, given back or skipped", () => {
    const positions = new MatchedPositions();
    positions.take(1);
    expect([positions.next, positions.count, positions.has(1)]).toEqual([0, 1, true]);
    // Taking the gap moves past the one taken ahead.
    positions.take(0);
    expect([positions.next, positions.count]).toEqual([2, 2]);
    // Given back, 0 is the next again; 1 stays matched.
    positions.untake(0);
    expect([positions.next, positions.count, positions.has(0), positions.has(1)]).toEqual([
      0,
      1,
      false,
      true,
    ]);
    positions.take(3);
    positions.skipBefore(2);
    expect([positions.next, positions.count]).toEqual([2, 3]);
    positions.take(2);
    expect([positions.next, positions.count]).toEqual([4, 4]);
    positions.untake(3);
    expect([positions.next, positions.count, positions.has(2)]).toEqual([3, 3, true]);
  });
});
