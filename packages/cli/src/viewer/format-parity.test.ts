import { describe, expect, it } from "vitest";
import { formatDuration } from "../format.js";
import { openWorkText } from "../open-work.js";

// The page's format.js is a plain ES module the browser loads (no build step): imported here
// as it is served, by URL, so the compiler leaves it alone.
const pageFormat = new URL("../../static/format.js", import.meta.url).href;

describe("the viewer's durations", () => {
  it("are inspect's, rule for rule: hours as 2 h 05 m", async () => {
    const { duration } = (await import(pageFormat)) as { duration: (ms: number) => string };
    // 7,500,000 ms read "125 m 00 s" on the page where inspect said "2 h 05 m".
    expect(duration(7_500_000)).toBe("2 h 05 m");
    const samples = [
      0, 1, 999, 999.6, 1000, 1449, 59_949, 59_950, 59_999, 60_000, 61_500, 3_599_000, 3_599_499,
      3_599_500, 3_600_000, 3_629_999, 3_630_000, 7_500_000, 86_400_000, 360_000_000_000,
    ];
    for (const ms of samples) expect(duration(ms), String(ms)).toBe(formatDuration(ms));
    for (let ms = 0; ms < 10_000_000; ms += 7_919)
      expect(duration(ms), String(ms)).toBe(formatDuration(ms));
  });
});

describe("the viewer's open work", () => {
  it("is said as sessions --unresolved says it", async () => {
    const page = (await import(pageFormat)) as { openWorkText: typeof openWorkText };
    expect(page.openWorkText({ unresolved: 2, paused: 1, openRuns: 1 })).toBe(
      "2 unresolved, 1 paused, 1 open run",
    );
    for (const unresolved of [0, 1, 3])
      for (const paused of [0, 1, 2])
        for (const openRuns of [0, 1, 2]) {
          const work = { unresolved, paused, openRuns };
          expect(page.openWorkText(work), JSON.stringify(work)).toBe(openWorkText(work));
        }
  });
});
