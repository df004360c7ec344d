import { describe, expect, it } from "vitest";
import { serverTooOld } from "./client.js";

const info = (version: string) =>
  `# Server\r\nredis_version:${version}\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n`;

describe("serverTooOld", () => {
  it("refuses a server before 5.0, whose scripts cannot write after TIME", () => {
    expect(serverTooOld(info("4.0.14"))).toMatch(/version 4\.0\.14; agent-ledger needs Redis 5\.0/);
    expect(serverTooOld(info("3.2.12"))).toBeDefined();
  });

  it("takes 5.0 and later, and servers that report no version (let their first append say)", () => {
    for (const version of ["5.0.0", "6.2.14", "7.0.15", "7.2.4", "8.0.2"])
      expect(serverTooOld(info(version)), version).toBeUndefined();
    expect(serverTooOld("# Server\r\nredis_mode:standalone\r\n")).toBeUndefined();
    expect(serverTooOld(info("unknown"))).toBeUndefined();
  });
});
