import { afterEach, describe, expect, it, vi } from "vitest";
import { isoNow } from "./clock.js";

describe("isoNow", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is toISOString of the current millisecond, as the clock moves either way", () => {
    vi.useFakeTimers();
    for (const ms of [Date.UTC(2026, 10, 29, 14, 0, 0, 1), 0, 0, 1, 86_400_000, 999, 5]) {
      vi.setSystemTime(ms);
      expect(isoNow()).toBe(new Date(ms).toISOString());
    }
    vi.setSystemTime(1_000);
    const first = isoNow();
    vi.advanceTimersByTime(1);
    expect(isoNow()).not.toBe(first);
    expect(isoNow()).toBe("1970-01-01T00:00:01.001Z");
  });
});
