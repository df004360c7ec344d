import type pg from "pg";
import { describe, expect, it } from "vitest";
import { ServerTimeoutError } from "../server-timeout.js";
import { migrationStatement } from "./init-database.js";

// A migration statement runs with the migration's bound (the store's plus 10 minutes): when it
// passes, the error names that bound, not the store's shorter one.

const timingOut = (message: string) =>
  ({
    query: async (config: { query_timeout?: number }) => {
      expect(config.query_timeout).toBe(630_000);
      throw new Error(message);
    },
  }) as unknown as pg.PoolClient;

describe("a migration statement", () => {
  it("that gets no reply within its bound says which bound it passed", async () => {
    const error = await migrationStatement(
      timingOut("Query read timeout"),
      { text: "SELECT 1" },
      630_000,
    ).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ServerTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 630_000, cause: { message: "Query read timeout" } });
    expect((error as Error).message).toContain("within 630000 ms");
  });

  it("fails as it failed for any other reason", async () => {
    await expect(
      migrationStatement(timingOut("permission denied"), { text: "SELECT 1" }, 630_000),
    ).rejects.toThrow("permission denied");
  });
});
