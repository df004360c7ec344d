import { StoreUnavailableError } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, exitCodeOf, refusedMidCommand } from "./errors.js";

const coded = (code: string, message = "refused") => Object.assign(new Error(message), { code });

describe("refusedMidCommand", () => {
  it("makes a refusal of the URL's user during a command exit 1 with what to check; a server out of reach stays exit 4", () => {
    const refused = refusedMidCommand(
      new StoreUnavailableError(
        "postgres append failed: permission denied for table runs",
        coded("42501", "permission denied for table runs"),
      ),
    );
    expect(refused?.message).toBe(
      "the server refused the store URL's user: postgres append failed: permission denied for table runs",
    );
    expect(exitCodeOf(refused)).toBe(EXIT_CODES.failure);
    expect(refused?.hint).toContain("check what the store URL's user may do");
    const away = new StoreUnavailableError("postgres append failed", coded("ECONNREFUSED"));
    expect(refusedMidCommand(away)).toBeUndefined();
    expect(exitCodeOf(away)).toBe(EXIT_CODES.unreachable);
  });
});
