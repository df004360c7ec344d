import { describe, expect, it } from "vitest";
import { loadingWaitMs } from "./server-ready.js";

describe("loadingWaitMs", () => {
  it("waits while the server loads its data, its ETA up to a second, and not once it is ready", () => {
    const persistence = (loading: string) => `# Persistence\r\n${loading}async_loading:0\r\n`;
    expect(loadingWaitMs(persistence("loading:1\r\nloading_eta_seconds:0\r\n"))).toBe(100);
    expect(loadingWaitMs(persistence("loading:1\r\n"))).toBe(100);
    expect(loadingWaitMs(persistence("loading:1\r\nloading_eta_seconds:30\r\n"))).toBe(1000);
    expect(loadingWaitMs(persistence("loading:0\r\n"))).toBeUndefined();
    expect(loadingWaitMs("# Server\r\nredis_version:7.0.15\r\n")).toBeUndefined();
  });
});
