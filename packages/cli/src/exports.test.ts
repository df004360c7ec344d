import { describe, expect, it } from "vitest";
import * as cli from "./index.js";

describe("@agent-ledger/cli public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(cli).sort()).toEqual(
      [
        "CONTENT_SECURITY_POLICY",
        "CliError",
        "DEFAULT_STORE_URL",
        "EXIT_CODES",
        "HELP",
        "assertSessionExists",
        "eventLine",
        "exitCodeOf",
        "exportOtlpJson",
        "formatDuration",
        "isLoopbackHost",
        "openCliStore",
        "renderInspection",
        "resolveStoreUrl",
        "runCli",
        "shellQuote",
        "startViewer",
        "toOtlpJson",
      ].sort(),
    );
  });

  it("exports exactly runCliInProcess from /testing", async () => {
    const testing = await import("./testing/index.js");
    expect(Object.keys(testing)).toEqual(["runCliInProcess"]);
  });

  it("pins the exit codes the README documents", () => {
    expect(cli.EXIT_CODES).toEqual({
      ok: 0,
      failure: 1,
      usage: 2,
      notFound: 3,
      unreachable: 4,
      interrupted: 130,
    });
    for (const line of [
      "0  success",
      "1  verify found tampering",
      "2  bad usage",
      "3  unknown session",
      "4  the store is unavailable",
      "130  export stopped by Ctrl-C",
    ])
      expect(cli.HELP).toContain(line);
  });

  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"])
      expect(cli.isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "example.com", "128.0.0.1"])
      expect(cli.isLoopbackHost(host), host).toBe(false);
  });
});
